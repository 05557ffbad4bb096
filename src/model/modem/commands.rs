//! The host commands applied to a modem: each [`Command`] (parsed and checked in
//! [`crate::wire::nmea::command`]) changes the modem's configuration, clock or cycle, or starts a
//! transmission, and answers with its [`Report`]s. A refused line is answered with
//! `$CAERR,hhmmss,NMEA,<code>,<text>`.

use super::{ns, rate_info, Cycle, Event, Modems, Payload, BOOT_S, NS};
use crate::wire::nmea::{
    Command, CommandError, CommandId, CycleInit, ErrCode, Param, Query, Report, Sentence,
};
use crate::wire::utc::Civil;

impl Modems {
    /// One line from a modem's host at sim time `now_ns` (events due before it run first).
    /// Never panics; every line gets an answer or a `$CAERR`, blank lines are ignored.
    pub fn host_line(&mut self, modem: usize, now_ns: u64, line: &[u8]) {
        self.advance(now_ns);
        if modem >= self.modems.len() {
            return;
        }
        if line.iter().all(|b| b.is_ascii_whitespace()) {
            return;
        }
        if let Err(e) = self.dispatch(modem, line) {
            let r = Report::nmea_error(self.time_of_day(modem), e.code, &e.text);
            self.report(modem, r);
        }
    }

    fn dispatch(&mut self, m: usize, line: &[u8]) -> Result<(), CommandError> {
        let s = Sentence::parse(line)?;
        // A `$CCTXD` with no `$CADRQ` outstanding is unexpected, whatever its fields.
        if CommandId::of(&s)? == CommandId::Txd && self.modems[m].cycle.is_none() {
            return Err(CommandError::new(
                ErrCode::Unexpected,
                "CCTXD without a data request",
            ));
        }
        match Command::parse(&s)? {
            Command::FactoryReset => self.factory_reset(m),
            Command::Cfg { param, value } => self.set_param(m, param, value),
            Command::Cfq(q) => self.query_params(m, q),
            Command::Clk(c) => self.set_clock_mm1(m, &c)?,
            Command::Tms { time, .. } => self.set_clock_mm2(m, &time)?,
            Command::Tmq => self.query_clock(m),
            Command::Msc { src, dest, command } => self.misc(m, src, dest, command),
            Command::Cyc(c) => self.start_cycle(m, c)?,
            Command::Txd {
                src,
                dest,
                ack,
                data,
            } => self.frame_data(m, src, dest, ack, data)?,
            Command::Mpc { src, dest } => self.ping(m, src, dest)?,
            Command::Muc { src, dest, value } => self.mini_packet(m, src, dest, value)?,
        }
        Ok(())
    }

    /// `$CCCFG,ALL,0`.
    fn factory_reset(&mut self, m: usize) {
        self.modems[m].factory();
        self.report(m, Report::FactoryReset);
    }

    /// `$CCCFG,NAME,value`.
    fn set_param(&mut self, m: usize, param: Param, value: i64) {
        self.modems[m].params[param.index()] = value;
        self.report(m, Report::Cfg { param, value });
    }

    /// `$CCCFQ`: one `$CACFG` per parameter asked for.
    fn query_params(&mut self, m: usize, q: Query) {
        let chosen: Vec<Param> = match q {
            Query::All => Param::all().collect(),
            Query::Top => Param::all().filter(|p| p.top()).collect(),
            Query::One(p) => vec![p],
        };
        for param in chosen {
            let value = self.modems[m].params[param.index()];
            self.report(m, Report::Cfg { param, value });
        }
    }

    /// `$CCCLK`: set the clock, echo it to the second.
    fn set_clock_mm1(&mut self, m: usize, c: &Civil) -> Result<(), CommandError> {
        let t = c
            .to_ns()
            .ok_or_else(|| CommandError::bad_field(CommandId::Clk, "not a valid date"))?;
        self.set_clock(m, t);
        self.report(m, Report::Clk(Civil::from_ns(self.clock_ns(m, self.now))));
        Ok(())
    }

    /// `$CCTMS`: set the clock, answer with the time now.
    fn set_clock_mm2(&mut self, m: usize, c: &Civil) -> Result<(), CommandError> {
        let t = c.to_ns().ok_or_else(|| {
            CommandError::bad_field(CommandId::Tms, "time is not YYYY-MM-DDThh:mm:ssZ")
        })?;
        self.set_clock(m, t);
        self.report(
            m,
            Report::Tms {
                timed_out: false,
                time: Civil::from_ns(self.clock_ns(m, self.now)),
            },
        );
        Ok(())
    }

    /// `$CCTMQ`.
    fn query_clock(&mut self, m: usize) {
        self.report(
            m,
            Report::Tmq {
                time: Civil::from_ns(self.clock_ns(m, self.now)),
                clock_source: 0,
                pps_source: 0,
            },
        );
    }

    /// `$CCMSC`: echoed; `0` reboots the modem (cycle dropped, `$CAREV,…,INIT` after [`BOOT_S`]).
    fn misc(&mut self, m: usize, src: u8, dest: u8, command: String) {
        let reboot = command.trim() == "0";
        self.report(m, Report::Msc { src, dest, command });
        if reboot {
            let md = &mut self.modems[m];
            md.cycle = None;
            md.boot_until = self.now + ns(BOOT_S);
            let at = md.boot_until;
            self.schedule(at, Event::BootDone { modem: m });
        }
    }

    /// `$CCCYC`: a cycle from this modem; `$CADRQ` for its first frame.
    fn start_cycle(&mut self, m: usize, c: CycleInit) -> Result<(), CommandError> {
        let own = self.modems[m].src();
        let src = c.src;
        if src != own {
            let what = format!(
                "src {src} is not this modem ({own}); remote-initiated cycles are not emulated"
            );
            return Err(CommandError::bad_field(CommandId::Cyc, &what));
        }
        self.check_idle(m)?;
        self.report(m, Report::Cyc(c));
        let id = self.next_cycle;
        self.next_cycle += 1;
        self.modems[m].cycle = Some(Cycle {
            id,
            dest: c.dest,
            rate: c.rate,
            ack: c.ack,
            nframes: c.nframes,
            frames: Vec::new(),
        });
        self.request_frame(m);
        Ok(())
    }

    /// `$CCTXD`: one frame of the cycle; the next `$CADRQ`, or the transmission after the last.
    fn frame_data(
        &mut self,
        m: usize,
        src: u8,
        dest: u8,
        ack: bool,
        data: Vec<u8>,
    ) -> Result<(), CommandError> {
        let Some(c) = self.modems[m].cycle.as_mut() else {
            return Err(CommandError::new(
                ErrCode::Unexpected,
                "CCTXD without a data request",
            ));
        };
        let max = rate_info(c.rate).map_or(0, |r| r.frame_bytes);
        if data.len() > max {
            return Err(CommandError::bad_field(
                CommandId::Txd,
                &format!("{} bytes exceed the frame's {max}", data.len()),
            ));
        }
        let nbytes = data.len();
        c.frames.push(data);
        let last = c.frames.len() >= c.nframes as usize;
        self.report(
            m,
            Report::Txd {
                src,
                dest,
                ack,
                nbytes,
            },
        );
        if !last {
            self.request_frame(m);
        } else if let Some(c) = self.modems[m].cycle.take() {
            let src = self.modems[m].src();
            self.transmit(
                m,
                src,
                c.dest,
                Payload::Data {
                    rate: c.rate,
                    ack: c.ack,
                    frames: c.frames,
                },
                true,
            );
        }
        Ok(())
    }

    /// `$CCMPC`: a two-way ping.
    fn ping(&mut self, m: usize, src: u8, dest: u8) -> Result<(), CommandError> {
        self.check_idle(m)?;
        self.report(m, Report::Mpc { src, dest });
        let own = self.modems[m].src();
        self.transmit(m, own, dest, Payload::Ping, true);
        Ok(())
    }

    /// `$CCMUC`: a mini-packet.
    fn mini_packet(&mut self, m: usize, src: u8, dest: u8, value: u16) -> Result<(), CommandError> {
        self.check_idle(m)?;
        self.report(m, Report::Muc { src, dest, value });
        let own = self.modems[m].src();
        self.transmit(m, own, dest, Payload::Mini { value }, true);
        Ok(())
    }

    fn check_idle(&self, m: usize) -> Result<(), CommandError> {
        let md = &self.modems[m];
        if md.cycle.is_some() || md.tx_until > self.now || md.boot_until > self.now {
            Err(CommandError::new(ErrCode::Busy, "modem busy"))
        } else {
            Ok(())
        }
    }

    fn set_clock(&mut self, m: usize, t: i64) {
        let base = self.fe.epoch_ns + self.now as i64;
        self.modems[m].clock_offset_ns = t - base;
    }

    /// `$CADRQ` for the cycle's next frame, and its data timeout.
    fn request_frame(&mut self, m: usize) {
        let Some(c) = self.modems[m].cycle.as_ref() else {
            return;
        };
        let (id, frame, dest, ack) = (c.id, c.frames.len() as u8 + 1, c.dest, c.ack);
        let max_bytes = rate_info(c.rate).map_or(0, |r| r.frame_bytes);
        let src = self.modems[m].src();
        self.report(
            m,
            Report::Drq {
                time: self.time_of_day(m),
                src,
                dest,
                ack,
                max_bytes,
                frame,
            },
        );
        let dto = self.modems[m].param("DTO").max(1) as u64;
        self.schedule(
            self.now + dto * NS,
            Event::DrqTimeout {
                modem: m,
                cycle: id,
                frame,
            },
        );
    }
}
