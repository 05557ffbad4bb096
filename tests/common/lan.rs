//! A simulated LAN for tests of runs spread over machines: N "hosts", each a network namespace
//! with one veth (`lan0`, 10.99.NET.(i+1)/24), joined by a Linux bridge in a namespace of its
//! own; and a [`Relay`] that adds the LAN's latency (this kernel has no `netem` qdisc): a TCP
//! forwarder inside a host that delays each chunk by a uniform draw in [delay − jitter,
//! delay + jitter], keeping order. Everything is removed when the [`Lan`] is dropped, also
//! after a panic.
#![allow(dead_code)]

use std::{
    io::{Read, Write},
    net::{Ipv4Addr, Shutdown, SocketAddr, TcpListener, TcpStream},
    os::fd::AsRawFd,
    path::PathBuf,
    process::Command,
    sync::{
        atomic::{AtomicBool, AtomicU32, Ordering},
        mpsc, Arc, Mutex,
    },
    thread::JoinHandle,
    time::{Duration, Instant},
};

/// Runs `ip` with `args`, panicking with its stderr when it fails.
fn ip(args: &[&str]) {
    let o = Command::new("ip").args(args).output().expect("run ip");
    assert!(
        o.status.success(),
        "ip {} failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&o.stderr).trim()
    );
}

/// Moves the calling thread into the network namespace `ns` (a name under /run/netns): the
/// sockets it creates from then on belong to that namespace.
pub fn enter_netns(ns: &str) -> std::io::Result<()> {
    let f = std::fs::File::open(format!("/run/netns/{ns}"))?;
    // SAFETY: setns on a valid descriptor only changes this thread's network namespace.
    if unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// The simulated LAN: hosts, the bridge between them, and their addresses.
pub struct Lan {
    prefix: String,
    net: u8,
    bridge: String,
    hosts: Vec<String>,
}

/// One host of a [`Lan`].
pub struct Host<'a> {
    lan: &'a Lan,
    i: usize,
}

impl Lan {
    /// `n` hosts (at most 200) on a /24 of their own, 10.99.NET.0/24, NET distinct per Lan of
    /// this process. Namespace names are unique per process and Lan: `lan<pid>n<NET>h<i>` and
    /// `lan<pid>n<NET>br`.
    pub fn new(n: usize) -> Lan {
        assert!((1..=200).contains(&n), "a Lan of {n} hosts");
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let seq = NEXT.fetch_add(1, Ordering::SeqCst);
        let net = ((std::process::id() % 50) * 5 + seq % 5) as u8;
        let prefix = format!("lan{}n{net}", std::process::id());
        let mut lan = Lan {
            bridge: format!("{prefix}br"),
            prefix,
            net,
            hosts: Vec::new(),
        };
        // From here on, Drop removes whatever was made.
        ip(&["netns", "add", &lan.bridge]);
        ip(&["-n", &lan.bridge, "link", "set", "lo", "up"]);
        ip(&["-n", &lan.bridge, "link", "add", "br0", "type", "bridge"]);
        ip(&["-n", &lan.bridge, "link", "set", "br0", "up"]);
        for i in 0..n {
            let ns = format!("{}h{i}", lan.prefix);
            ip(&["netns", "add", &ns]);
            lan.hosts.push(ns.clone());
            let port = format!("p{i}");
            ip(&[
                "-n",
                &lan.bridge,
                "link",
                "add",
                &port,
                "type",
                "veth",
                "peer",
                "name",
                "lan0",
                "netns",
                &ns,
            ]);
            ip(&["-n", &lan.bridge, "link", "set", &port, "master", "br0"]);
            ip(&["-n", &lan.bridge, "link", "set", &port, "up"]);
            ip(&["-n", &ns, "link", "set", "lo", "up"]);
            let addr = format!("{}/24", lan.address(i));
            ip(&["-n", &ns, "addr", "add", &addr, "dev", "lan0"]);
            ip(&["-n", &ns, "link", "set", "lan0", "up"]);
        }
        lan
    }

    pub fn len(&self) -> usize {
        self.hosts.len()
    }

    /// The third byte of the Lan's addresses, 10.99.NET.0/24.
    pub fn net(&self) -> u8 {
        self.net
    }

    /// Host `i`'s address, 10.99.NET.(i+1).
    pub fn address(&self, i: usize) -> Ipv4Addr {
        Ipv4Addr::new(10, 99, self.net, i as u8 + 1)
    }

    pub fn host(&self, i: usize) -> Host<'_> {
        assert!(i < self.hosts.len(), "host {i} of {}", self.hosts.len());
        Host { lan: self, i }
    }

    /// The namespaces the Lan made: its hosts' and its bridge's.
    pub fn namespaces(&self) -> Vec<String> {
        let mut v = self.hosts.clone();
        v.push(self.bridge.clone());
        v
    }

    /// Pulls host `i`'s cable: its port on the bridge goes down, so whatever it sends or is
    /// sent is lost without a word (no reset, no unreachable).
    pub fn cut(&self, i: usize) {
        ip(&["-n", &self.bridge, "link", "set", &format!("p{i}"), "down"]);
    }

    /// Plugs host `i`'s cable back in.
    pub fn mend(&self, i: usize) {
        ip(&["-n", &self.bridge, "link", "set", &format!("p{i}"), "up"]);
    }
}

impl Drop for Lan {
    fn drop(&mut self) {
        // Deleting a namespace deletes its veth ends (and the peers with them) and the bridge.
        for ns in self.hosts.iter().chain([&self.bridge]) {
            let _ = Command::new("ip").args(["netns", "del", ns]).output();
        }
    }
}

impl Host<'_> {
    /// The namespace's name (under /run/netns).
    pub fn netns(&self) -> &str {
        &self.lan.hosts[self.i]
    }

    pub fn address(&self) -> Ipv4Addr {
        self.lan.address(self.i)
    }

    /// A command running `program` on this host: in its network namespace, everything else
    /// (mounts, files, /run/netns) shared with the machine, as on a host of its own whose
    /// namespaces the test can see. Not `ip netns exec`, whose private mount namespace would
    /// hide the namespaces a program made from everyone else. Arguments added go to `program`.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut cmd = Command::new("nsenter");
        cmd.arg(format!("--net=/run/netns/{}", self.netns()))
            .arg("--")
            .arg(program);
        cmd
    }

    /// Runs `f` on a thread inside this host's network namespace and returns what it returns.
    pub fn run<T: Send + 'static>(&self, f: impl FnOnce() -> T + Send + 'static) -> T {
        let ns = self.netns().to_owned();
        std::thread::spawn(move || {
            enter_netns(&ns).expect("enter the host's namespace");
            f()
        })
        .join()
        .unwrap_or_else(|p| std::panic::resume_unwind(p))
    }
}

/// The file of namespace `ns`, to tell whether it is gone.
pub fn netns_path(ns: &str) -> PathBuf {
    PathBuf::from("/run/netns").join(ns)
}

/// A TCP forwarder inside one host of a [`Lan`], adding the LAN's latency each way: it listens
/// on an address of the host (e.g. 127.0.0.1) and connects each accepted connection to `to`
/// through the host's network. Each chunk read is written on after a delay drawn uniformly in
/// [delay − jitter, delay + jitter] µs, in order (a chunk is due at max(the previous chunk's due
/// time, its read time + its delay)). When either side closes or fails, both are closed.
pub struct Relay {
    local: SocketAddr,
    stop: Arc<AtomicBool>,
    open: Arc<Mutex<Vec<TcpStream>>>,
    threads: Arc<Mutex<Vec<JoinHandle<()>>>>,
    accept: Option<JoinHandle<()>>,
}

impl Relay {
    /// Starts the relay in host `host` of `lan`, listening on `listen` (port 0: any; see
    /// [`Relay::local`]) and forwarding to `to`.
    pub fn start(
        lan: &Lan,
        host: usize,
        listen: SocketAddr,
        to: SocketAddr,
        delay_us: u64,
        jitter_us: u64,
    ) -> std::io::Result<Relay> {
        assert!(jitter_us <= delay_us);
        let ns = lan.host(host).netns().to_owned();
        let listener = {
            let ns = ns.clone();
            std::thread::spawn(move || -> std::io::Result<TcpListener> {
                enter_netns(&ns)?;
                TcpListener::bind(listen)
            })
            .join()
            .expect("bind the relay")?
        };
        let local = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let open = Arc::new(Mutex::new(Vec::new()));
        let threads = Arc::new(Mutex::new(Vec::new()));
        let accept = {
            let (stop, open, threads) = (stop.clone(), open.clone(), threads.clone());
            std::thread::spawn(move || {
                enter_netns(&ns).expect("enter the relay's host");
                let mut seed = Instant::now().elapsed().as_nanos() as u64
                    ^ u64::from(std::process::id()) << 32
                    ^ 0x9e37_79b9_7f4a_7c15;
                while !stop.load(Ordering::SeqCst) {
                    let mut pfd = libc::pollfd {
                        fd: listener.as_raw_fd(),
                        events: libc::POLLIN,
                        revents: 0,
                    };
                    // SAFETY: one valid pollfd.
                    if unsafe { libc::poll(&mut pfd, 1, 50) } <= 0 {
                        continue;
                    }
                    let Ok((a, _)) = listener.accept() else {
                        continue;
                    };
                    // Created by this thread, so in the host's namespace.
                    let Ok(b) = TcpStream::connect_timeout(&to, Duration::from_secs(3)) else {
                        let _ = a.shutdown(Shutdown::Both);
                        continue;
                    };
                    let _ = a.set_nodelay(true);
                    let _ = b.set_nodelay(true);
                    let mut list = open.lock().unwrap();
                    let mut spawned = threads.lock().unwrap();
                    for (from, into) in [(&a, &b), (&b, &a)] {
                        seed = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
                        let (Ok(from), Ok(into), Ok(from2), Ok(into2)) = (
                            from.try_clone(),
                            into.try_clone(),
                            from.try_clone(),
                            into.try_clone(),
                        ) else {
                            let _ = a.shutdown(Shutdown::Both);
                            let _ = b.shutdown(Shutdown::Both);
                            break;
                        };
                        spawned.extend(pump(from, into, from2, into2, delay_us, jitter_us, seed));
                    }
                    list.extend([a, b]);
                }
            })
        };
        Ok(Relay {
            local,
            stop,
            open,
            threads,
            accept: Some(accept),
        })
    }

    /// The address it listens on (inside its host).
    pub fn local(&self) -> SocketAddr {
        self.local
    }

    pub fn port(&self) -> u16 {
        self.local.port()
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.accept.take() {
            let _ = t.join();
        }
        for s in self.open.lock().unwrap().drain(..) {
            let _ = s.shutdown(Shutdown::Both);
        }
        for t in self.threads.lock().unwrap().drain(..) {
            let _ = t.join();
        }
    }
}

/// What a reader hands its writer.
enum Chunk {
    Data(Vec<u8>, Instant),
    End,
}

/// One direction: a reader stamping each chunk with its due time, a writer writing it then.
fn pump(
    mut from: TcpStream,
    mut into: TcpStream,
    from_w: TcpStream,
    into_r: TcpStream,
    delay_us: u64,
    jitter_us: u64,
    mut seed: u64,
) -> [JoinHandle<()>; 2] {
    let (tx, rx) = mpsc::sync_channel::<Chunk>(1024);
    let reader = std::thread::spawn(move || {
        let mut due = Instant::now();
        let mut buf = vec![0u8; 64 << 10];
        loop {
            match from.read(&mut buf) {
                Ok(0) | Err(_) => {
                    let _ = tx.send(Chunk::End);
                    return;
                }
                Ok(n) => {
                    // xorshift64*: a uniform draw in [delay - jitter, delay + jitter].
                    seed ^= seed >> 12;
                    seed ^= seed << 25;
                    seed ^= seed >> 27;
                    let r = seed.wrapping_mul(0x2545_f491_4f6c_dd1d);
                    let us = delay_us - jitter_us + r % (2 * jitter_us + 1);
                    due = due.max(Instant::now() + Duration::from_micros(us));
                    if tx.send(Chunk::Data(buf[..n].to_vec(), due)).is_err() {
                        return;
                    }
                }
            }
        }
    });
    let writer = std::thread::spawn(move || {
        // Sleeps end within microseconds of their deadline, not the default 50 µs slack.
        // SAFETY: prctl with an integer argument changes only this thread's timer slack.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
        while let Ok(Chunk::Data(bytes, due)) = rx.recv() {
            let now = Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
            if into.write_all(&bytes).is_err() {
                break;
            }
        }
        let _ = into.shutdown(Shutdown::Both);
        let _ = from_w.shutdown(Shutdown::Both);
        let _ = into_r.shutdown(Shutdown::Both);
    });
    [reader, writer]
}
