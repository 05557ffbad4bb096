//! NMEA host lines into an emulated Micro-Modem: the sentence parser, then the modem emulator
//! (`config/acoustic_modems.yaml`'s four modems) handling each line. The input is the host's
//! byte stream, one line per `\n`; a blank line (which the emulator ignores) hands the next
//! lines to the next modem one second later, so one input can drive several modems.
#![no_main]
use libfuzzer_sys::fuzz_target;
use netsim_cosim::model::modem::Front;
use netsim_cosim::wire::nmea::{self, Sentence};

const LINE_NS: u64 = 50_000_000;
const BLANK_NS: u64 = 1_000_000_000;

fuzz_target!(|data: &[u8]| {
    let s = &netsim_cosim_fuzz::acoustic_modems().scenario;
    let mut front = Front::from_scenario(s).expect("the scenario has modems");
    front.set_channel(0, &netsim_cosim_fuzz::channel_at_start(s));
    let modems = front.modems().len();
    let (mut modem, mut now) = (0, 0);
    for line in data.split(|&b| b == b'\n') {
        if line.iter().all(|b| b.is_ascii_whitespace()) {
            modem = (modem + 1) % modems;
            now += BLANK_NS;
            continue;
        }
        // Whatever parses re-emits to the same sentence.
        if let Ok(s) = Sentence::parse(line) {
            let again = nmea::emit(&s.id(), &s.fields);
            assert_eq!(Sentence::parse(again.as_bytes()).map(|t| t.fields), Ok(s.fields.clone()));
        }
        front.host_line(modem, now, line);
        now += LINE_NS;
    }
    // Let every transmission, timeout and heartbeat play out.
    front.shutdown(now + 60 * BLANK_NS);
    for out in front.drain() {
        assert!(Sentence::parse(out.line.as_bytes()).is_ok(), "the emulator wrote {:?}", out.line);
    }
});
