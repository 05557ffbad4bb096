//! The live viewer's TLS files (`viewer.tls`: a certificate chain and a key, PEM): split at a
//! byte of the input into the two files' contents, never a panic; a refusal says which file and
//! why.
#![no_main]
use libfuzzer_sys::fuzz_target;
use netsim_cosim::io::servers::tls::{server_config, PemError};

fuzz_target!(|data: &[u8]| {
    let Some((&at, rest)) = data.split_first() else {
        return;
    };
    let (cert, key) = rest.split_at((at as usize * rest.len()) / 256);
    if let Err(PemError::Certificates(why) | PemError::Key(why) | PemError::Pair(why)) =
        server_config(cert, key)
    {
        assert!(!why.is_empty());
    }
});
