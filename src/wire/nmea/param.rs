//! The Micro-Modem's configuration parameters (`$CCCFG`, `$CCCFQ`, `$CACFG`): names, factory
//! values, which ones `$CCCFQ,TOP` lists, and the values each accepts.

/// The parameter set: name, factory value, part of `$CCCFQ,TOP`.
pub const PARAMS: &[(&str, i64, bool)] = &[
    ("AGC", 0, false),
    ("AGN", 250, true),
    ("ASD", 0, false),
    ("BND", 0, true),
    ("BR1", 3, false),
    ("BR2", 3, false),
    ("BRN", 0, false),
    ("BSP", 1, false),
    ("BW0", 5000, true),
    ("CPR", 1, false),
    ("CRL", 50, false),
    ("CST", 0, true),
    ("CTO", 10, true),
    ("DBG", 0, false),
    ("DGM", 0, false),
    ("DOP", 1, false),
    ("DQF", 0, false),
    ("DTH", 108, false),
    ("DTO", 2, true),
    ("DTP", 90, false),
    ("ECD", 50, false),
    ("EFB", 0, false),
    ("EFF", 100, false),
    ("FC0", 25000, true),
    ("FMD", 1, false),
    ("FML", 200, false),
    ("GPS", 0, false),
    ("HFC", 0, false),
    ("IRE", 0, false),
    ("MCM", 1, false),
    ("MFD", 1, false),
    ("MOD", 0, true),
    ("MPR", 1, false),
    ("MSE", 0, false),
    ("MVM", 1, false),
    ("NDT", 150, false),
    ("NPT", 50, false),
    ("NRL", 0, false),
    ("NRV", 150, false),
    ("PAD", 2, false),
    ("PCM", 0, false),
    ("POW", -100, true),
    ("PRL", 50, false),
    ("PTH", 180, false),
    ("PTO", 6, true),
    ("REV", 1, true),
    ("RXA", 0, false),
    ("RXD", 1, false),
    ("RXP", 1, true),
    ("SCG", 0, false),
    ("SGP", 0, false),
    ("SHF", 0, false),
    ("SNR", 0, false),
    ("SNV", 0, false),
    ("SRC", 0, true),
    ("TAT", 50, false),
    ("TOA", 0, false),
    ("TXD", 600, true),
    ("TXP", 0, false),
    ("XST", 0, true),
];

/// One parameter of [`PARAMS`] (only ever an index into it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Param(u8);

impl Param {
    /// The parameter called `name` (upper case, as in [`PARAMS`]).
    pub fn named(name: &str) -> Option<Param> {
        PARAMS
            .iter()
            .position(|p| p.0 == name)
            .map(|i| Param(i as u8))
    }

    /// Every parameter, in [`PARAMS`] order.
    pub fn all() -> impl Iterator<Item = Param> {
        (0..PARAMS.len()).map(|i| Param(i as u8))
    }

    /// Position in [`PARAMS`].
    pub fn index(self) -> usize {
        self.0 as usize
    }

    pub fn name(self) -> &'static str {
        PARAMS[self.index()].0
    }

    pub fn factory(self) -> i64 {
        PARAMS[self.index()].1
    }

    /// Listed by `$CCCFQ,TOP`.
    pub fn top(self) -> bool {
        PARAMS[self.index()].2
    }

    /// Values `$CCCFG` accepts (inclusive).
    pub fn range(self) -> (i64, i64) {
        match self.name() {
            "SRC" => (0, 127),
            "CST" | "XST" | "REV" | "RXP" | "RXA" | "RXD" | "AGC" | "DOP" | "MOD" | "TOA"
            | "TXP" | "MFD" | "MSE" | "DQF" | "SNV" => (0, 1),
            "DTO" => (1, 30),
            "BND" => (0, 5),
            "BR1" | "BR2" | "BRN" => (0, 8),
            "POW" => (-200, 0),
            _ => (-1_000_000, 1_000_000),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_factory_values_in_range() {
        assert!(PARAMS.len() < 256);
        for p in Param::all() {
            assert_eq!(Param::named(p.name()), Some(p));
            let (lo, hi) = p.range();
            assert!((lo..=hi).contains(&p.factory()), "{}", p.name());
        }
        assert_eq!(Param::named("src"), None);
        assert_eq!(Param::all().filter(|p| p.top()).count(), 15);
    }
}
