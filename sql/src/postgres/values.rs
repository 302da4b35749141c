//! Values across the wire: a parameter written as the type the server
//! inferred for its place, a column read as one of SQLite's storage
//! classes.

use crate::error::{Error, Result};
use crate::numeric::{self, Number};
use crate::value::{ToSql, ValueRef};
use bytes::BufMut;
use tokio_postgres::types::{FromSql, IsNull, Type, to_sql_checked};

pub(super) fn bind<'a>(params: &'a [&'a dyn ToSql]) -> Vec<Param<'a>> {
    params.iter().map(|p| Param(p.to_sql())).collect()
}

pub(super) fn refs<'a>(
    values: &'a [Param<'a>],
) -> Vec<&'a (dyn tokio_postgres::types::ToSql + Sync)> {
    values
        .iter()
        .map(|v| v as &(dyn tokio_postgres::types::ToSql + Sync))
        .collect()
}

/// A parameter written as the type the server inferred for its place.
#[derive(Debug)]
pub(super) struct Param<'a>(pub(super) ValueRef<'a>);

type BoxError = Box<dyn std::error::Error + Sync + Send>;

fn cannot(value: ValueRef<'_>, ty: &Type) -> BoxError {
    format!("cannot bind {} as {ty}", value.kind()).into()
}

impl tokio_postgres::types::ToSql for Param<'_> {
    fn to_sql(&self, ty: &Type, out: &mut bytes::BytesMut) -> Result<IsNull, BoxError> {
        let value = self.0;
        match value {
            ValueRef::Null => return Ok(IsNull::Yes),
            ValueRef::Integer(i) => match *ty {
                Type::INT8 => out.put_i64(i),
                Type::INT4 => out.put_i32(i32::try_from(i)?),
                Type::INT2 => out.put_i16(i16::try_from(i)?),
                #[allow(clippy::cast_precision_loss)]
                Type::FLOAT8 => out.put_f64(i as f64),
                #[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
                Type::FLOAT4 => out.put_f32(i as f32),
                Type::BOOL => out.put_u8(u8::from(i != 0)),
                Type::OID => out.put_u32(u32::try_from(i)?),
                Type::NUMERIC => {
                    let mut buf = Vec::new();
                    numeric::encode(&i.to_string(), &mut buf)?;
                    out.put_slice(&buf);
                }
                Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN => {
                    out.put_slice(i.to_string().as_bytes());
                }
                _ => return Err(cannot(value, ty)),
            },
            ValueRef::Real(f) => match *ty {
                Type::FLOAT8 => out.put_f64(f),
                #[allow(clippy::cast_possible_truncation)]
                Type::FLOAT4 => out.put_f32(f as f32),
                Type::NUMERIC => {
                    let mut buf = Vec::new();
                    if f.is_finite() {
                        numeric::encode(&f.to_string(), &mut buf)?;
                    } else {
                        numeric::encode_special(f, &mut buf);
                    }
                    out.put_slice(&buf);
                }
                Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::UNKNOWN => {
                    out.put_slice(f.to_string().as_bytes());
                }
                _ => return Err(cannot(value, ty)),
            },
            ValueRef::Text(s) => match *ty {
                Type::TEXT
                | Type::VARCHAR
                | Type::BPCHAR
                | Type::NAME
                | Type::UNKNOWN
                | Type::JSON => out.put_slice(s.as_bytes()),
                Type::JSONB => {
                    out.put_u8(1);
                    out.put_slice(s.as_bytes());
                }
                _ => return Err(cannot(value, ty)),
            },
            ValueRef::Blob(b) => match *ty {
                Type::BYTEA => out.put_slice(b),
                _ => return Err(cannot(value, ty)),
            },
        }
        Ok(IsNull::No)
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

/// A column read as one of SQLite's storage classes.
pub(crate) struct Column<'a>(pub(crate) ValueRef<'a>);

impl<'a> FromSql<'a> for Column<'a> {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        let be = |n: usize| -> Result<&'a [u8], BoxError> {
            raw.get(..n)
                .filter(|_| raw.len() == n)
                .ok_or_else(|| format!("{ty} of {} bytes", raw.len()).into())
        };
        let value = match *ty {
            Type::INT8 => ValueRef::Integer(i64::from_be_bytes(be(8)?.try_into()?)),
            Type::INT4 => ValueRef::Integer(i64::from(i32::from_be_bytes(be(4)?.try_into()?))),
            Type::INT2 => ValueRef::Integer(i64::from(i16::from_be_bytes(be(2)?.try_into()?))),
            Type::OID => ValueRef::Integer(i64::from(u32::from_be_bytes(be(4)?.try_into()?))),
            Type::BOOL => ValueRef::Integer(i64::from(be(1)?[0] != 0)),
            Type::FLOAT8 => ValueRef::Real(f64::from_be_bytes(be(8)?.try_into()?)),
            Type::FLOAT4 => ValueRef::Real(f64::from(f32::from_be_bytes(be(4)?.try_into()?))),
            Type::NUMERIC => match numeric::decode(raw)? {
                Number::Integer(i) => ValueRef::Integer(i),
                Number::Real(f) => ValueRef::Real(f),
            },
            Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN | Type::JSON => {
                ValueRef::Text(std::str::from_utf8(raw)?)
            }
            Type::JSONB => match raw.split_first() {
                Some((1, text)) => ValueRef::Text(std::str::from_utf8(text)?),
                _ => return Err("a jsonb of an unknown version".into()),
            },
            Type::BYTEA => ValueRef::Blob(raw),
            Type::VOID => ValueRef::Null,
            _ => {
                return Err(format!("a column of type {ty}, which the store does not read").into());
            }
        };
        Ok(Column(value))
    }

    fn from_sql_null(_: &Type) -> Result<Self, BoxError> {
        Ok(Column(ValueRef::Null))
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

/// Column `idx` of `row` as a storage class.
pub(crate) fn column(row: &tokio_postgres::Row, idx: usize) -> Result<ValueRef<'_>> {
    row.try_get::<usize, Column<'_>>(idx)
        .map(|c| c.0)
        .map_err(|e| Error::conversion(idx, e.to_string()))
}
