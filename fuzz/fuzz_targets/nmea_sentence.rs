//! NMEA host lines into an emulated Micro-Modem: the sentence parser, the typed catalogue
//! (each line read as a host's [`Command`] and as a modem's [`Report`]), then the modem
//! emulator (`config/acoustic_modems.yaml`'s four modems) handling each line. The input is the
//! host's byte stream, one line per `\n`; a blank line (which the emulator ignores) hands the
//! next lines to the next modem one second later, so one input can drive several modems.
//! Everything the emulator writes is a catalogued report that re-emits to the same bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use netsim_cosim::model::modem::Modems;
use netsim_cosim::wire::channel::ChannelView;
use netsim_cosim::wire::nmea::{self, Command, Report, Sentence};

const LINE_NS: u64 = 50_000_000;
const BLANK_NS: u64 = 1_000_000_000;

/// Whatever the catalogue parses emits a sentence that parses again and emits the same bytes
/// (a value itself need not survive: a float may carry more digits than its sentence).
fn catalogue(line: &[u8]) {
    if let Ok(c) = Command::from_line(line) {
        let emitted = c.emit();
        let again = Command::from_line(emitted.as_bytes())
            .unwrap_or_else(|e| panic!("{c:?} emits {emitted:?}, which does not parse: {e}"));
        assert_eq!(
            again.emit(),
            emitted,
            "{c:?} emits {emitted:?}, which parses to {again:?}"
        );
    }
    if let Ok(r) = Report::from_line(line) {
        let emitted = r.emit();
        let again = Report::from_line(emitted.as_bytes())
            .unwrap_or_else(|e| panic!("{r:?} emits {emitted:?}, which does not parse: {e}"));
        assert_eq!(
            again.emit(),
            emitted,
            "{r:?} emits {emitted:?}, which parses to {again:?}"
        );
    }
}

fuzz_target!(|data: &[u8]| {
    let s = &netsim_cosim_fuzz::acoustic_modems().scenario;
    let mut modems = Modems::from_scenario(s).expect("the scenario has modems");
    let channel = netsim_cosim_fuzz::channel_at_start(s);
    let view = ChannelView::check(&channel, s.vehicles.len())
        .expect("a channel of the scenario's vehicles");
    modems.set_channel(0, &view);
    let count = modems.modems().len();
    let (mut modem, mut now) = (0, 0);
    for line in data.split(|&b| b == b'\n') {
        if line.iter().all(|b| b.is_ascii_whitespace()) {
            modem = (modem + 1) % count;
            now += BLANK_NS;
            continue;
        }
        // Whatever parses re-emits to the same sentence.
        if let Ok(s) = Sentence::parse(line) {
            let again = nmea::emit(&s.id(), &s.fields);
            assert_eq!(
                Sentence::parse(again.as_bytes()).map(|t| t.fields),
                Ok(s.fields.clone())
            );
        }
        catalogue(line);
        modems.host_line(modem, now, line);
        now += LINE_NS;
    }
    // Let every transmission, timeout and heartbeat play out.
    modems.shutdown(now + 60 * BLANK_NS);
    for out in modems.drain() {
        let report = Report::from_line(out.line.as_bytes())
            .unwrap_or_else(|e| panic!("the emulator wrote {:?}, not a report: {e}", out.line));
        assert_eq!(
            report.emit(),
            out.line,
            "the emulator wrote {:?}, which parses to {report:?}",
            out.line
        );
    }
});
