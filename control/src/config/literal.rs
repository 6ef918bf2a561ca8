//! A table's keys and their TOML literals, read through its `Serialize` in
//! declaration order: how [`super::emit`] writes a section whose type is
//! declared once in a lower crate (`[timers]` is `rrp::router::Timers`,
//! `management.manager_timers` is `mgmt::manager::ManagerTimers`), so that a
//! new field is emitted, diffed on reload and shown by `mwctl show config`
//! without a line here.
//!
//! Integers are written in decimal as they are (a value above a TOML
//! integer's range is refused by validation, not here), strings as basic
//! strings, a `None` field is left out, a list is `[a, b]` and a nested
//! struct an inline table `{ k = v, ... }`. Anything else (floats, maps,
//! enum variants with data) is a programming error: [`fields`] and
//! [`value`] panic on it.

use core::fmt;

use serde::Serialize;
use serde::ser::{self, Impossible};

use super::emit::quote;

/// The fields of struct `v` as (key, TOML literal), in declaration order;
/// `None` fields are left out.
///
/// # Panics
/// When `v` is not a struct of the values this module writes.
pub(super) fn fields<T: Serialize>(v: &T) -> Vec<(&'static str, String)> {
    v.serialize(Fields)
        .unwrap_or_else(|e| panic!("not a table of TOML literals: {e}"))
}

/// `v` as one TOML literal (a struct as an inline table).
///
/// # Panics
/// When `v` is `None` or holds a value this module does not write.
pub(super) fn value<T: Serialize>(v: &T) -> String {
    v.serialize(Literal)
        .unwrap_or_else(|e| panic!("not a TOML literal: {e}"))
        .unwrap_or_else(|| panic!("None has no TOML literal"))
}

/// A value this module does not write.
#[derive(Debug)]
pub(super) struct Unsupported(String);

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Unsupported {}

impl ser::Error for Unsupported {
    fn custom<T: fmt::Display>(msg: T) -> Unsupported {
        Unsupported(msg.to_string())
    }
}

fn unsupported<T>(what: &str) -> Result<T, Unsupported> {
    Err(Unsupported(format!("{what} has no TOML literal here")))
}

/// Serialises a struct into its (key, literal) pairs.
struct Fields;

/// The pairs of one struct, as they come.
struct FieldList(Vec<(&'static str, String)>);

impl ser::SerializeStruct for FieldList {
    type Ok = Vec<(&'static str, String)>;
    type Error = Unsupported;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Unsupported> {
        if let Some(v) = value.serialize(Literal)? {
            self.0.push((key, v));
        }
        Ok(())
    }

    fn end(self) -> Result<Self::Ok, Unsupported> {
        Ok(self.0)
    }
}

/// Only a struct is a table: everything else is refused.
macro_rules! refuse {
    ($($name:ident($($arg:ty),*) -> $ok:ty;)*) => {
        $(
            fn $name(self, $(_: $arg),*) -> Result<$ok, Unsupported> {
                unsupported(stringify!($name))
            }
        )*
    };
}

impl ser::Serializer for Fields {
    type Ok = Vec<(&'static str, String)>;
    type Error = Unsupported;
    type SerializeSeq = Impossible<Self::Ok, Unsupported>;
    type SerializeTuple = Impossible<Self::Ok, Unsupported>;
    type SerializeTupleStruct = Impossible<Self::Ok, Unsupported>;
    type SerializeTupleVariant = Impossible<Self::Ok, Unsupported>;
    type SerializeMap = Impossible<Self::Ok, Unsupported>;
    type SerializeStruct = FieldList;
    type SerializeStructVariant = Impossible<Self::Ok, Unsupported>;

    fn serialize_struct(self, _: &'static str, len: usize) -> Result<FieldList, Unsupported> {
        Ok(FieldList(Vec::with_capacity(len)))
    }

    refuse! {
        serialize_bool(bool) -> Self::Ok;
        serialize_i8(i8) -> Self::Ok;
        serialize_i16(i16) -> Self::Ok;
        serialize_i32(i32) -> Self::Ok;
        serialize_i64(i64) -> Self::Ok;
        serialize_u8(u8) -> Self::Ok;
        serialize_u16(u16) -> Self::Ok;
        serialize_u32(u32) -> Self::Ok;
        serialize_u64(u64) -> Self::Ok;
        serialize_f32(f32) -> Self::Ok;
        serialize_f64(f64) -> Self::Ok;
        serialize_char(char) -> Self::Ok;
        serialize_str(&str) -> Self::Ok;
        serialize_bytes(&[u8]) -> Self::Ok;
        serialize_none() -> Self::Ok;
        serialize_unit() -> Self::Ok;
        serialize_unit_struct(&'static str) -> Self::Ok;
        serialize_unit_variant(&'static str, u32, &'static str) -> Self::Ok;
        serialize_seq(Option<usize>) -> Self::SerializeSeq;
        serialize_tuple(usize) -> Self::SerializeTuple;
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
        serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Self::SerializeTupleVariant;
        serialize_map(Option<usize>) -> Self::SerializeMap;
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant;
    }

    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<Self::Ok, Unsupported> {
        v.serialize(self)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<Self::Ok, Unsupported> {
        v.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<Self::Ok, Unsupported> {
        unsupported("an enum variant with data")
    }
}

/// Serialises one value into its literal; `None` for a `None` (the key is
/// left out).
struct Literal;

/// The elements of a list, or the pairs of an inline table, as literals.
struct Parts {
    parts: Vec<String>,
    inline_table: bool,
}

impl Parts {
    fn push<T: Serialize + ?Sized>(&mut self, key: Option<&str>, v: &T) -> Result<(), Unsupported> {
        match (key, v.serialize(Literal)?) {
            (Some(k), Some(v)) => self.parts.push(format!("{k} = {v}")),
            (None, Some(v)) => self.parts.push(v),
            (Some(_), None) => {}
            (None, None) => return unsupported("None in a list"),
        }
        Ok(())
    }

    fn done(self) -> Option<String> {
        Some(if self.inline_table {
            format!("{{ {} }}", self.parts.join(", "))
        } else {
            format!("[{}]", self.parts.join(", "))
        })
    }
}

impl ser::SerializeSeq for Parts {
    type Ok = Option<String>;
    type Error = Unsupported;

    fn serialize_element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Unsupported> {
        self.push(None, v)
    }

    fn end(self) -> Result<Option<String>, Unsupported> {
        Ok(self.done())
    }
}

impl ser::SerializeTuple for Parts {
    type Ok = Option<String>;
    type Error = Unsupported;

    fn serialize_element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Unsupported> {
        self.push(None, v)
    }

    fn end(self) -> Result<Option<String>, Unsupported> {
        Ok(self.done())
    }
}

impl ser::SerializeStruct for Parts {
    type Ok = Option<String>;
    type Error = Unsupported;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        v: &T,
    ) -> Result<(), Unsupported> {
        self.push(Some(key), v)
    }

    fn end(self) -> Result<Option<String>, Unsupported> {
        Ok(self.done())
    }
}

/// An integer's literal.
macro_rules! integers {
    ($($name:ident($ty:ty);)*) => {
        $(
            fn $name(self, v: $ty) -> Result<Option<String>, Unsupported> {
                Ok(Some(v.to_string()))
            }
        )*
    };
}

impl ser::Serializer for Literal {
    type Ok = Option<String>;
    type Error = Unsupported;
    type SerializeSeq = Parts;
    type SerializeTuple = Parts;
    type SerializeTupleStruct = Impossible<Self::Ok, Unsupported>;
    type SerializeTupleVariant = Impossible<Self::Ok, Unsupported>;
    type SerializeMap = Impossible<Self::Ok, Unsupported>;
    type SerializeStruct = Parts;
    type SerializeStructVariant = Impossible<Self::Ok, Unsupported>;

    integers! {
        serialize_i8(i8);
        serialize_i16(i16);
        serialize_i32(i32);
        serialize_i64(i64);
        serialize_u8(u8);
        serialize_u16(u16);
        serialize_u32(u32);
        serialize_u64(u64);
    }

    fn serialize_bool(self, v: bool) -> Result<Option<String>, Unsupported> {
        Ok(Some(v.to_string()))
    }

    fn serialize_char(self, v: char) -> Result<Option<String>, Unsupported> {
        Ok(Some(quote(v.encode_utf8(&mut [0; 4]))))
    }

    fn serialize_str(self, v: &str) -> Result<Option<String>, Unsupported> {
        Ok(Some(quote(v)))
    }

    fn serialize_none(self) -> Result<Option<String>, Unsupported> {
        Ok(None)
    }

    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<Option<String>, Unsupported> {
        v.serialize(self)
    }

    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<Option<String>, Unsupported> {
        Ok(Some(quote(variant)))
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<Option<String>, Unsupported> {
        v.serialize(self)
    }

    fn serialize_seq(self, len: Option<usize>) -> Result<Parts, Unsupported> {
        Ok(Parts {
            parts: Vec::with_capacity(len.unwrap_or(0)),
            inline_table: false,
        })
    }

    fn serialize_tuple(self, len: usize) -> Result<Parts, Unsupported> {
        self.serialize_seq(Some(len))
    }

    fn serialize_struct(self, _: &'static str, len: usize) -> Result<Parts, Unsupported> {
        Ok(Parts {
            parts: Vec::with_capacity(len),
            inline_table: true,
        })
    }

    refuse! {
        serialize_f32(f32) -> Self::Ok;
        serialize_f64(f64) -> Self::Ok;
        serialize_bytes(&[u8]) -> Self::Ok;
        serialize_unit() -> Self::Ok;
        serialize_unit_struct(&'static str) -> Self::Ok;
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
        serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Self::SerializeTupleVariant;
        serialize_map(Option<usize>) -> Self::SerializeMap;
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant;
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<Option<String>, Unsupported> {
        unsupported("an enum variant with data")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Inner {
        a: u32,
        b: bool,
    }

    #[derive(Serialize)]
    struct Table {
        n: u64,
        s: String,
        none: Option<u8>,
        some: Option<u8>,
        list: Vec<u16>,
        inner: Inner,
    }

    #[test]
    fn fields_come_in_declaration_order_as_literals() {
        let t = Table {
            n: u64::MAX,
            s: "a \"b\"".into(),
            none: None,
            some: Some(7),
            list: vec![1, 2],
            inner: Inner { a: 3, b: true },
        };
        assert_eq!(
            fields(&t),
            [
                ("n", "18446744073709551615".to_string()),
                ("s", "\"a \\\"b\\\"\"".to_string()),
                ("some", "7".to_string()),
                ("list", "[1, 2]".to_string()),
                ("inner", "{ a = 3, b = true }".to_string()),
            ]
        );
        assert_eq!(value(&t.inner), "{ a = 3, b = true }");
    }
}
