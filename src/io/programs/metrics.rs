//! A program's metrics file: every program of the scenario gets `COSIM_METRICS`, the path of
//! `<out>/programs/<name>.metrics.jsonl` (created empty as it starts), and appends metric lines
//! to it ([`crate::wire::metric_line`]). The run reads what was appended as it goes, at most
//! [`READ_PER_CALL`] bytes of a file per call, and hands the values on as [`MetricSample`]s
//! for the record. Lines it cannot use are counted, and the first ones kept with their file and
//! line number; nothing a program writes stops the run.

use crate::output::schema::MetricSample;
use crate::output::summary::MetricsFileReport;
use crate::wire::metric_line::MetricLine;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The most bytes read of one file per [`MetricsFile::read`].
pub const READ_PER_CALL: usize = 64 << 10;
/// The longest metric line (bytes, without its newline); longer ones are refused.
pub const MAX_LINE: usize = 4096;
/// The most values recorded of one program; further lines are counted as dropped.
pub const MAX_SAMPLES: u64 = 1_000_000;
/// The most bytes read of one file over a run; the rest is counted as unread.
pub const MAX_FILE_BYTES: u64 = 256 << 20;
/// How many refused lines are kept (and logged) per file.
const KEPT_ERRORS: usize = 10;

/// The file name of program `name`'s metrics in its log folder.
pub fn file_name(program: &str) -> String {
    format!("{program}.metrics.jsonl")
}

/// One program's metrics file, read as it grows.
pub struct MetricsFile {
    vehicle: Option<String>,
    file: File,
    /// The line being read (an incomplete last line waits for its end).
    line: Vec<u8>,
    /// The line being read got longer than [`MAX_LINE`]: its rest is skipped.
    overlong: bool,
    /// Lines ended so far.
    lines: u64,
    /// Bytes read so far.
    read: u64,
    report: MetricsFileReport,
}

impl MetricsFile {
    /// Creates (or empties) `path` for program `program` (inside `vehicle`, if any) and opens
    /// it for reading.
    pub fn create(
        path: &Path,
        program: &str,
        vehicle: Option<&str>,
    ) -> std::io::Result<MetricsFile> {
        File::create(path)?;
        Ok(MetricsFile {
            vehicle: vehicle.map(str::to_owned),
            file: File::open(path)?,
            line: Vec::new(),
            overlong: false,
            lines: 0,
            read: 0,
            report: MetricsFileReport {
                program: program.to_owned(),
                file: path.to_path_buf(),
                ..Default::default()
            },
        })
    }

    pub fn path(&self) -> &Path {
        &self.report.file
    }

    /// Reads what was appended since the last call, at most `buf.len()` bytes (and
    /// [`MAX_FILE_BYTES`] over the run); each complete line's value goes to `out`, at its own
    /// `t_ns` or else at `now_ns`. Returns the bytes read (0: nothing new).
    pub fn read(&mut self, now_ns: u64, buf: &mut [u8], out: &mut Vec<MetricSample>) -> usize {
        let room = MAX_FILE_BYTES.saturating_sub(self.read);
        let want = buf.len().min(usize::try_from(room).unwrap_or(usize::MAX));
        if want == 0 {
            return 0;
        }
        let n = match self.file.read(&mut buf[..want]) {
            Ok(n) => n,
            Err(e) => {
                self.refuse(format!("{}: cannot read: {e}", self.path().display()));
                return 0;
            }
        };
        self.read += n as u64;
        let mut rest = &buf[..n];
        while !rest.is_empty() {
            let (piece, ended) = match rest.iter().position(|&b| b == b'\n') {
                Some(i) => (&rest[..i], Some(i + 1)),
                None => (rest, None),
            };
            if !self.overlong {
                if self.line.len() + piece.len() > MAX_LINE {
                    self.overlong = true;
                    self.line.clear();
                } else {
                    self.line.extend_from_slice(piece);
                }
            }
            match ended {
                Some(i) => {
                    self.end_line(now_ns, out);
                    rest = &rest[i..];
                }
                None => break,
            }
        }
        n
    }

    /// The line read so far is complete.
    fn end_line(&mut self, now_ns: u64, out: &mut Vec<MetricSample>) {
        self.lines += 1;
        if std::mem::take(&mut self.overlong) {
            let why = format!("longer than {MAX_LINE} bytes");
            self.refuse_line(why);
            return;
        }
        if self.line.iter().all(u8::is_ascii_whitespace) {
            self.line.clear();
            return;
        }
        match MetricLine::parse(&self.line) {
            Ok(_) if self.report.samples >= MAX_SAMPLES => self.report.dropped += 1,
            Ok(m) => {
                self.report.samples += 1;
                out.push(MetricSample {
                    t_s: m.t_ns.unwrap_or(now_ns) as f64 / 1e9,
                    program: self.report.program.clone(),
                    vehicle: self.vehicle.clone(),
                    name: m.name,
                    value: m.value,
                    from: m.from,
                });
            }
            Err(why) => self.refuse_line(why),
        }
        self.line.clear();
    }

    fn refuse_line(&mut self, why: String) {
        let at = format!("{}:{}: {why}", self.path().display(), self.lines);
        self.refuse(at);
    }

    fn refuse(&mut self, error: String) {
        self.report.refused += 1;
        if self.report.errors.len() < KEPT_ERRORS {
            tracing::warn!(program = %self.report.program, "metric line refused: {error}");
            self.report.errors.push(error);
        }
    }

    /// The program has ended: reads the rest of the file (up to [`MAX_FILE_BYTES`] in all; a
    /// last line without its newline counts) and says what the run made of it, or `None` for
    /// a file that stayed empty.
    pub fn finish(
        mut self,
        now_ns: u64,
        buf: &mut [u8],
        out: &mut Vec<MetricSample>,
    ) -> Option<MetricsFileReport> {
        while self.read(now_ns, buf, out) > 0 {}
        if !self.line.is_empty() || self.overlong {
            self.end_line(now_ns, out);
        }
        if let Ok(meta) = self.file.metadata() {
            self.report.unread_bytes = meta.len().saturating_sub(self.read);
        }
        (self.read > 0 || self.report.unread_bytes > 0).then_some(self.report)
    }
}

/// The metrics file of `program` in the log folder `logs`.
pub fn path(logs: &Path, program: &str) -> PathBuf {
    logs.join(file_name(program))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn append(path: &Path, bytes: &[u8]) {
        std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .unwrap()
            .write_all(bytes)
            .unwrap();
    }

    #[test]
    fn values_are_read_as_lines_complete_and_bad_lines_counted_with_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = path(dir.path(), "listener");
        let mut f = MetricsFile::create(&path, "listener", Some("usv1")).unwrap();
        let mut buf = vec![0; READ_PER_CALL];
        let mut out = Vec::new();
        assert_eq!(f.read(1_000, &mut buf, &mut out), 0);
        append(
            &path,
            b"{\"name\":\"latency_s\",\"value\":0.25,\"t_ns\":7,\"from\":\"usv2\"}\n\nnot json\n{\"name\":\"la",
        );
        f.read(2_000, &mut buf, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(
            out[0],
            MetricSample {
                t_s: 7e-9,
                program: "listener".into(),
                vehicle: Some("usv1".into()),
                name: "latency_s".into(),
                value: 0.25,
                from: Some("usv2".into()),
            }
        );
        // The incomplete line waits for its end; a line without t_ns takes the read's time.
        append(&path, b"tency_s\",\"value\":1}\n");
        f.read(3_000_000_000, &mut buf, &mut out);
        assert_eq!(out.len(), 2);
        assert_eq!(out[1].t_s, 3.0);
        // An overlong line is refused whole; the next one reads.
        let mut long = vec![b' '; MAX_LINE + 10];
        long.push(b'\n');
        append(&path, &long);
        append(
            &path,
            b"{\"name\":\"x\",\"value\":2,\"bad\":1}\n{\"name\":\"x\",\"value\":3}",
        );
        let mut rounds = 0;
        while f.read(4_000, &mut buf[..100], &mut out) > 0 {
            rounds += 1;
        }
        assert!(rounds > 40, "at most the buffer per call: {rounds}");
        assert_eq!(out.len(), 2);
        let report = f.finish(5_000, &mut buf, &mut out).unwrap();
        assert_eq!(
            out.len(),
            3,
            "the last line without its newline counts at the end"
        );
        assert_eq!((report.samples, report.refused, report.dropped), (3, 3, 0));
        let p = path.display();
        assert_eq!(
            report.errors,
            vec![
                format!("{p}:3: expected ident at line 1 column 2"),
                format!("{p}:5: longer than {MAX_LINE} bytes"),
                format!("{p}:6: unknown field `bad`, expected one of `name`, `value`, `t_ns`, `from` at line 1 column 27"),
            ]
        );
    }

    #[test]
    fn a_file_left_empty_reports_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = path(dir.path(), "p");
        let f = MetricsFile::create(&path, "p", None).unwrap();
        assert_eq!(f.finish(0, &mut [0; 16], &mut Vec::new()), None);
    }
}
