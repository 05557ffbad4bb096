//! A program's metric line: one JSON object per line of the file `COSIM_METRICS` names,
//! `{"name": "latency_s", "value": 0.0123, "t_ns": 12345000000, "from": "usv2"}`:
//! - `name`: what is measured, 1-64 characters of `A-Z a-z 0-9 _ . / -`;
//! - `value`: a finite number;
//! - `t_ns`: optional, the program's sim time of the value (ns); absent: when the run read it;
//! - `from`: optional, the vehicle the measured thing came from (the report shows the one-way
//!   delay of the link from it to the program's vehicle beside the values).
//!
//! Any other key is refused, so that a misspelt one is not silently lost.

use serde::Deserialize;

/// The longest `name` and `from`.
pub const MAX_NAME: usize = 64;

/// One metric line, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricLine {
    pub name: String,
    pub value: f64,
    pub t_ns: Option<u64>,
    pub from: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    name: String,
    value: f64,
    #[serde(default)]
    t_ns: Option<u64>,
    #[serde(default)]
    from: Option<String>,
}

fn token(what: &str, s: &str) -> Result<(), String> {
    if s.is_empty() || s.len() > MAX_NAME {
        return Err(format!(
            "{what} {s:?}: must have 1 to {MAX_NAME} characters"
        ));
    }
    if let Some(c) = s
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-')))
    {
        return Err(format!(
            "{what} {s:?}: {c:?} is not one of A-Z a-z 0-9 _ . / -"
        ));
    }
    Ok(())
}

impl MetricLine {
    /// Parses one line (without its newline; a trailing `\r` and surrounding blanks are
    /// allowed). The error says what is wrong, in words.
    pub fn parse(line: &[u8]) -> Result<MetricLine, String> {
        let raw: Raw = serde_json::from_slice(line).map_err(|e| e.to_string())?;
        token("name", &raw.name)?;
        if let Some(f) = &raw.from {
            token("from", f)?;
        }
        if !raw.value.is_finite() {
            return Err(format!("value {} is not finite", raw.value));
        }
        Ok(MetricLine {
            name: raw.name,
            value: raw.value,
            t_ns: raw.t_ns,
            from: raw.from,
        })
    }

    /// The line as a program writes it (with its newline).
    pub fn to_line(&self) -> String {
        let mut v = serde_json::json!({"name": self.name, "value": self.value});
        if let Some(t) = self.t_ns {
            v["t_ns"] = t.into();
        }
        if let Some(f) = &self.from {
            v["from"] = f.as_str().into();
        }
        format!("{v}\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{rngs::StdRng, SeedableRng};

    #[test]
    fn a_line_reads_with_and_without_its_optional_keys() {
        let l = MetricLine::parse(
            br#"{"name": "latency_s", "value": 0.0125, "t_ns": 12000000000, "from": "usv2"}"#,
        )
        .unwrap();
        assert_eq!(
            l,
            MetricLine {
                name: "latency_s".into(),
                value: 0.0125,
                t_ns: Some(12_000_000_000),
                from: Some("usv2".into()),
            }
        );
        assert_eq!(MetricLine::parse(l.to_line().trim().as_bytes()).unwrap(), l);
        let l = MetricLine::parse(b" {\"name\":\"queue/depth\",\"value\":3}\r").unwrap();
        assert_eq!((l.t_ns, l.from), (None, None));
    }

    #[test]
    fn malformed_lines_are_refused_in_words() {
        let cases: [(&[u8], &str); 9] = [
            (b"", "EOF"),
            (b"latency 0.1", "expected"),
            (br#"{"name": "a", "value": "1"}"#, "invalid type"),
            (br#"{"name": "a"}"#, "missing field `value`"),
            (
                br#"{"name": "a", "value": 1, "vlaue": 2}"#,
                "unknown field `vlaue`",
            ),
            (br#"{"name": "", "value": 1}"#, "1 to 64 characters"),
            (br#"{"name": "a b", "value": 1}"#, "' ' is not one of"),
            (br#"{"name": "a", "value": 1, "t_ns": -5}"#, "invalid value"),
            (
                br#"{"name": "a", "value": 1, "from": "usv\n2"}"#,
                "is not one of",
            ),
        ];
        for (line, why) in cases {
            let e = MetricLine::parse(line).unwrap_err();
            assert!(e.contains(why), "{:?}: {e}", String::from_utf8_lossy(line));
        }
        assert!(MetricLine::parse(br#"{"name": "a", "value": 1e999}"#).is_err());
    }

    #[test]
    fn no_mutation_of_a_line_panics() {
        let mut rng = StdRng::seed_from_u64(31);
        let line = br#"{"name": "latency_s", "value": 0.01, "t_ns": 5, "from": "usv2"}"#;
        for _ in 0..20_000 {
            let mut l = line.to_vec();
            crate::wire::mutate(&mut rng, &mut l, b"{}\":,.-e0\\");
            let _ = MetricLine::parse(&l);
        }
    }
}
