//! The description language of the sentence tables: [`sentences!`] turns one entry per sentence
//! into an enum variant, its id, its fields as written and its parser; [`group!`] does the same
//! for a struct of fields that several sentences carry. A field's wire format is a marker type
//! (the `as` part of an entry; [`Plain`] when there is none): it writes the value ([`Put`]) and,
//! once per direction, reads it back ([`Take`], through that direction's [`Read`]er: a report is
//! read as the modem writes it, a command checked as a modem checks it).
//!
//! An entry is `Variant = ID =>` and one of
//! - `{ field: Type as Format, … }`: a struct variant; `field("name"): …` names the field
//!   differently on the wire (in error texts);
//! - `(Type as Format)`: a tuple variant of one value (a group such as
//!   [`CycleInit`](super::CycleInit), or a format reading several fields);
//! - `[ … ]`: a unit variant, of fixed fields only.
//!
//! Besides value fields, `{ … }` and `[ … ]` take fixed fields: `name = "TEXT"`, written as
//! `TEXT` and compared on reading, and `name ~ "TEXT"`, written as `TEXT` and not compared. The
//! first fixed field of an entry is its tag: where entries share an id, a line is read as the
//! first whose tag matches (the last entry's error stands when none does). Fixed fields carry no
//! `///` docs (there is no field for them to document).

/// How a value of type `T` is written: as zero or more fields appended to `out`.
pub(crate) trait Put<T: ?Sized> {
    fn put(v: &T, out: &mut Vec<String>);
}

/// How a value of type `T` is read back from the fields `R` reads (one direction's reader).
pub(crate) trait Take<T, R: Read> {
    /// The value from the next field(s); `name` is the field's name in error texts.
    fn take(r: &mut R, name: &'static str) -> Result<T, R::Error>;
}

/// The fields of one sentence, read in order, in one direction.
pub(crate) trait Read {
    type Error;
    /// A fixed field: `text`, or an error (for the entry's first fixed field, one that lets an
    /// entry with the same id try the line: see [`Read::other_sentence`]).
    fn fixed(&mut self, name: &'static str, text: &'static str) -> Result<(), Self::Error>;
    /// A field written as a fixed text, not compared.
    fn skip(&mut self, name: &'static str) -> Result<(), Self::Error>;
    /// After an error: whether it was the entry's tag not matching (the line may be another
    /// entry's with the same id).
    fn other_sentence(&self) -> bool;
    /// After the last field: what is left over, if that is an error.
    fn finish(&self) -> Result<(), Self::Error>;
}

/// Which fixed field of an entry is its tag (the first), and whether an error was the tag not
/// matching: for a [`Read`]er's `fixed` and `other_sentence`.
#[derive(Default)]
pub(crate) struct Tag {
    seen: bool,
    missed: bool,
}

impl Tag {
    /// The check of a fixed field, passed on, noted as the tag's when it is the first.
    pub(crate) fn check<E>(&mut self, checked: Result<(), E>) -> Result<(), E> {
        let first = !std::mem::replace(&mut self.seen, true);
        self.missed = first && checked.is_err();
        checked
    }

    pub(crate) fn missed(&self) -> bool {
        self.missed
    }
}

/// The format a field has when its entry names none: the natural one of its type.
pub(crate) struct Plain;

/// The format of a field: the one named (`as Format`), else [`Plain`].
macro_rules! format_of {
    () => {
        $crate::wire::nmea::table::Plain
    };
    ($c:ty) => {
        $c
    };
}

/// The field's name on the wire: the one given in `field("name")`, else the field's own.
macro_rules! wire_name {
    ($f:ident) => {
        stringify!($f)
    };
    ($f:ident $w:literal) => {
        $w
    };
}

/// `$f` (the tokens after it only steer the repetition of the caller's macro).
macro_rules! first {
    ($f:ident $($steer:tt)*) => {
        $f
    };
}

/// The names the expansions below use, for a `use` inside them.
macro_rules! table_names {
    () => {
        #[allow(unused_imports)]
        use $crate::wire::nmea::table::{
            first, format_of, one_field, wire_name, Plain, Put, Read, Take,
        };
    };
}

/// One field of an entry: `@put` writes it (value fields bound by name), `@take` reads it
/// (value fields into a local of their name) from the reader `$r` (a `&mut`).
macro_rules! one_field {
    (@put $out:ident; $f:ident $(($w:literal))? = $text:literal) => {
        $out.push($text.to_string())
    };
    (@put $out:ident; $f:ident $(($w:literal))? ~ $text:literal) => {
        $out.push($text.to_string())
    };
    (@put $out:ident; $f:ident $(($w:literal))? : $t:ty $(as $c:ty)?) => {
        <format_of!($($c)?) as Put<$t>>::put($f, $out)
    };
    (@take $r:ident; $f:ident $(($w:literal))? = $text:literal) => {
        Read::fixed(&mut *$r, wire_name!($f $($w)?), $text)?
    };
    (@take $r:ident; $f:ident $(($w:literal))? ~ $text:literal) => {
        Read::skip(&mut *$r, wire_name!($f $($w)?))?
    };
    (@take $r:ident; $f:ident $(($w:literal))? : $t:ty $(as $c:ty)?) => {
        let $f = <format_of!($($c)?) as Take<$t, _>>::take(&mut *$r, wire_name!($f $($w)?))?;
    };
}

/// An enum of sentences from a table of entries (see the module docs), with `id()`,
/// `put_fields()` (the fields as written) and `read()` (the entry a line of that id is, or
/// None for an id no entry has).
macro_rules! sentences {
    (
        $(#[$em:meta])*
        pub enum $E:ident(id: $Id:ty, read by $R:ident) {
            $(
                $(#[$m:meta])*
                $V:ident = $id:expr =>
                $({ $(
                    $(#[$fm:meta])*
                    $f:ident $(($w:literal))? $(= $lit:literal)? $(~ $txt:literal)?
                    $(: $t:ty $(as $c:ty)?)?
                ),* $(,)? })?
                $(( $tt:ty $(as $tc:ty)? ))?
                $([ $(
                    $uf:ident $(($uw:literal))? $(= $ulit:literal)? $(~ $utxt:literal)?
                ),* $(,)? ])?
            ),* $(,)?
        }
    ) => {
        $(#[$em])*
        pub enum $E {
            $(
                $(#[$m])*
                $V $({ $( $(#[$fm])* $($f: $t,)? )* })? $(($tt))?,
            )*
        }

        const _: () = {
            $crate::wire::nmea::table::table_names!();

            impl $E {
                /// The sentence id: talker and type.
                pub fn id(&self) -> $Id {
                    match self {
                        $(Self::$V { .. } => $id,)*
                    }
                }

                /// The fields, in order, as written.
                fn put_fields(&self, out: &mut Vec<String>) {
                    match self {
                        $(
                            $(Self::$V { $($($f: first!($f $t),)?)* } => {
                                $(one_field!(@put out; $f $(($w))? $(= $lit)? $(~ $txt)? $(: $t $(as $c)?)?);)*
                            })?
                            $(Self::$V(v) => <format_of!($($tc)?) as Put<$tt>>::put(v, out),)?
                            $(Self::$V => {
                                $(one_field!(@put out; $uf $(($uw))? $(= $ulit)? $(~ $utxt)?);)*
                            })?
                        )*
                    }
                }

                /// The entry a sentence with id `id` is, its fields read by the readers `reader`
                /// makes (a fresh one per entry tried); None when no entry has that id.
                #[allow(clippy::redundant_closure_call)]
                fn read<'r, I: PartialEq<$Id>>(
                    id: I,
                    mut reader: impl FnMut() -> $R<'r>,
                ) -> Option<Result<Self, <$R<'r> as Read>::Error>> {
                    let mut other = None;
                    $(
                        if id == $id {
                            let mut fields = reader();
                            let r = &mut fields;
                            let got: Result<Self, _> = (|| {
                                $(
                                    $(one_field!(@take r; $f $(($w))? $(= $lit)? $(~ $txt)? $(: $t $(as $c)?)?);)*
                                    r.finish()?;
                                    Ok(Self::$V { $($($f: first!($f $t),)?)* })
                                )?
                                $(
                                    let v = <format_of!($($tc)?) as Take<$tt, _>>::take(&mut *r, stringify!($V))?;
                                    r.finish()?;
                                    Ok(Self::$V(v))
                                )?
                                $(
                                    $(one_field!(@take r; $uf $(($uw))? $(= $ulit)? $(~ $utxt)?);)*
                                    r.finish()?;
                                    Ok(Self::$V)
                                )?
                            })();
                            match got {
                                Err(e) if r.other_sentence() => other = Some(Err(e)),
                                got => return Some(got),
                            }
                        }
                    )*
                    other
                }
            }
        };
    };
}

/// A struct of fields several sentences carry, from the same kind of field list as a
/// [`sentences!`] struct entry: the struct, its [`Put`] and, for every reader that reads each
/// of its fields' formats, its [`Take`] (also boxed).
macro_rules! group {
    (
        $(#[$gm:meta])*
        pub struct $G:ident {
            $(
                $(#[$fm:meta])*
                $f:ident $(($w:literal))? $(= $lit:literal)? $(~ $txt:literal)?
                $(: $t:ty $(as $c:ty)?)?
            ),* $(,)?
        }
    ) => {
        $(#[$gm])*
        pub struct $G {
            $( $(#[$fm])* $(pub $f: $t,)? )*
        }

        const _: () = {
            $crate::wire::nmea::table::table_names!();

            impl Put<$G> for Plain {
                fn put(v: &$G, out: &mut Vec<String>) {
                    let $G { $($($f: first!($f $t),)?)* } = v;
                    $(one_field!(@put out; $f $(($w))? $(= $lit)? $(~ $txt)? $(: $t $(as $c)?)?);)*
                }
            }

            impl<R: Read> Take<$G, R> for Plain
            where
                $($(format_of!($($c)?): Take<$t, R>,)?)*
            {
                fn take(r: &mut R, _: &'static str) -> Result<$G, R::Error> {
                    $(one_field!(@take r; $f $(($w))? $(= $lit)? $(~ $txt)? $(: $t $(as $c)?)?);)*
                    Ok($G { $($($f: first!($f $t),)?)* })
                }
            }

            impl Put<Box<$G>> for Plain {
                fn put(v: &Box<$G>, out: &mut Vec<String>) {
                    <Self as Put<$G>>::put(v, out)
                }
            }

            impl<R: Read> Take<Box<$G>, R> for Plain
            where
                Self: Take<$G, R>,
            {
                fn take(r: &mut R, name: &'static str) -> Result<Box<$G>, R::Error> {
                    <Self as Take<$G, R>>::take(r, name).map(Box::new)
                }
            }
        };
    };
}

pub(crate) use {first, format_of, group, one_field, sentences, table_names, wire_name};
