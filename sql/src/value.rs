//! Values as the store sees them, whichever database holds them: SQLite's
//! five storage classes. A parameter is turned into one ([`ToSql`]), a
//! column is read from one ([`FromSql`]); each executor converts them to and
//! from its own database's types, leniently where SQLite would be (an
//! integer bound where PostgreSQL expects `int4`, a `numeric` sum read as
//! an integer).

use std::fmt;

/// A value borrowed from a parameter or a row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ValueRef<'a> {
    Null,
    Integer(i64),
    Real(f64),
    Text(&'a str),
    Blob(&'a [u8]),
}

/// An owned value, for a caller that keeps what it read.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Integer(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

impl ValueRef<'_> {
    /// The storage class's name, for error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            ValueRef::Null => "null",
            ValueRef::Integer(_) => "integer",
            ValueRef::Real(_) => "real",
            ValueRef::Text(_) => "text",
            ValueRef::Blob(_) => "blob",
        }
    }

    pub fn to_owned(&self) -> Value {
        match *self {
            ValueRef::Null => Value::Null,
            ValueRef::Integer(i) => Value::Integer(i),
            ValueRef::Real(f) => Value::Real(f),
            ValueRef::Text(s) => Value::Text(s.to_owned()),
            ValueRef::Blob(b) => Value::Blob(b.to_vec()),
        }
    }
}

impl Value {
    pub fn as_ref(&self) -> ValueRef<'_> {
        match self {
            Value::Null => ValueRef::Null,
            Value::Integer(i) => ValueRef::Integer(*i),
            Value::Real(f) => ValueRef::Real(*f),
            Value::Text(s) => ValueRef::Text(s),
            Value::Blob(b) => ValueRef::Blob(b),
        }
    }
}

/// A Rust value bound as a statement's parameter.
pub trait ToSql {
    fn to_sql(&self) -> ValueRef<'_>;
}

/// Why a column could not be read as the Rust type asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct FromSqlError(pub String);

impl fmt::Display for FromSqlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn wrong(want: &str, got: ValueRef<'_>) -> FromSqlError {
    FromSqlError(format!("expected {want}, found {}", got.kind()))
}

/// A Rust value read from a column.
pub trait FromSql: Sized {
    fn from_sql(value: ValueRef<'_>) -> Result<Self, FromSqlError>;
}

/// Integers, each with how it becomes SQLite's i64.
macro_rules! integer {
    ($($t:ty => $to:expr),* $(,)?) => {$(
        impl ToSql for $t {
            fn to_sql(&self) -> ValueRef<'_> {
                ValueRef::Integer($to(*self))
            }
        }
        impl FromSql for $t {
            fn from_sql(value: ValueRef<'_>) -> Result<Self, FromSqlError> {
                match value {
                    ValueRef::Integer(i) => <$t>::try_from(i)
                        .map_err(|_| FromSqlError(format!("{i} is out of range for {}", stringify!($t)))),
                    other => Err(wrong("integer", other)),
                }
            }
        }
    )*};
}

/// Wider than SQLite's integers: a value past i64::MAX is bound as the
/// largest there is (rusqlite refuses it; counts and sizes never get there).
fn saturating<T: TryInto<i64>>(v: T) -> i64 {
    v.try_into().unwrap_or(i64::MAX)
}

integer!(
    i8 => i64::from, i16 => i64::from, i32 => i64::from, i64 => i64::from,
    u8 => i64::from, u16 => i64::from, u32 => i64::from,
    u64 => saturating, usize => saturating, isize => saturating,
);

impl ToSql for bool {
    fn to_sql(&self) -> ValueRef<'_> {
        ValueRef::Integer(i64::from(*self))
    }
}

impl FromSql for bool {
    fn from_sql(value: ValueRef<'_>) -> Result<Self, FromSqlError> {
        match value {
            ValueRef::Integer(i) => Ok(i != 0),
            other => Err(wrong("integer", other)),
        }
    }
}

impl ToSql for f64 {
    fn to_sql(&self) -> ValueRef<'_> {
        ValueRef::Real(*self)
    }
}

impl ToSql for f32 {
    fn to_sql(&self) -> ValueRef<'_> {
        ValueRef::Real(f64::from(*self))
    }
}

impl FromSql for f64 {
    fn from_sql(value: ValueRef<'_>) -> Result<Self, FromSqlError> {
        match value {
            ValueRef::Real(f) => Ok(f),
            // As SQLite: an integer read as a real.
            #[allow(clippy::cast_precision_loss)]
            ValueRef::Integer(i) => Ok(i as f64),
            other => Err(wrong("real", other)),
        }
    }
}

impl ToSql for str {
    fn to_sql(&self) -> ValueRef<'_> {
        ValueRef::Text(self)
    }
}

impl ToSql for String {
    fn to_sql(&self) -> ValueRef<'_> {
        ValueRef::Text(self)
    }
}

impl FromSql for String {
    fn from_sql(value: ValueRef<'_>) -> Result<Self, FromSqlError> {
        match value {
            ValueRef::Text(s) => Ok(s.to_owned()),
            other => Err(wrong("text", other)),
        }
    }
}

impl ToSql for [u8] {
    fn to_sql(&self) -> ValueRef<'_> {
        ValueRef::Blob(self)
    }
}

impl ToSql for Vec<u8> {
    fn to_sql(&self) -> ValueRef<'_> {
        ValueRef::Blob(self)
    }
}

impl<const N: usize> ToSql for [u8; N] {
    fn to_sql(&self) -> ValueRef<'_> {
        ValueRef::Blob(self)
    }
}

impl FromSql for Vec<u8> {
    fn from_sql(value: ValueRef<'_>) -> Result<Self, FromSqlError> {
        match value {
            ValueRef::Blob(b) => Ok(b.to_vec()),
            other => Err(wrong("blob", other)),
        }
    }
}

impl<const N: usize> FromSql for [u8; N] {
    fn from_sql(value: ValueRef<'_>) -> Result<Self, FromSqlError> {
        match value {
            ValueRef::Blob(b) => <[u8; N]>::try_from(b)
                .map_err(|_| FromSqlError(format!("expected {N} bytes, found {}", b.len()))),
            other => Err(wrong("blob", other)),
        }
    }
}

impl<T: ToSql> ToSql for Option<T> {
    fn to_sql(&self) -> ValueRef<'_> {
        match self {
            Some(v) => v.to_sql(),
            None => ValueRef::Null,
        }
    }
}

impl<T: FromSql> FromSql for Option<T> {
    fn from_sql(value: ValueRef<'_>) -> Result<Self, FromSqlError> {
        match value {
            ValueRef::Null => Ok(None),
            v => T::from_sql(v).map(Some),
        }
    }
}

impl<T: ToSql + ?Sized> ToSql for &T {
    fn to_sql(&self) -> ValueRef<'_> {
        (**self).to_sql()
    }
}

impl ToSql for Value {
    fn to_sql(&self) -> ValueRef<'_> {
        self.as_ref()
    }
}

impl ToSql for ValueRef<'_> {
    fn to_sql(&self) -> ValueRef<'_> {
        *self
    }
}

impl FromSql for Value {
    fn from_sql(value: ValueRef<'_>) -> Result<Self, FromSqlError> {
        Ok(value.to_owned())
    }
}

macro_rules! value_from {
    ($($t:ty => $v:ident),+) => {$(
        impl From<$t> for Value {
            fn from(v: $t) -> Self {
                Value::$v(v.into())
            }
        }
    )+};
}

value_from!(i64 => Integer, i32 => Integer, u32 => Integer, f64 => Real, String => Text, &str => Text, Vec<u8> => Blob);

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Self {
        v.map_or(Value::Null, Into::into)
    }
}

/// Parameters from a list built at run time (a filter's values, a list
/// of ids), for a statement whose text is built with it.
pub fn params_from_iter<'a, T: ToSql + 'a>(
    values: impl IntoIterator<Item = &'a T>,
) -> Vec<&'a dyn ToSql> {
    values.into_iter().map(|v| v as &dyn ToSql).collect()
}

/// Parameters as a slice of [`ToSql`], as rusqlite's macro of the same name.
#[macro_export]
macro_rules! params {
    () => {
        &[] as &[&dyn $crate::ToSql]
    };
    ($($p:expr),+ $(,)?) => {
        &[$(&$p as &dyn $crate::ToSql),+] as &[&dyn $crate::ToSql]
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_read_back_and_refuse_what_does_not_fit() {
        assert_eq!(i32::from_sql(ValueRef::Integer(7)), Ok(7));
        assert!(i32::from_sql(ValueRef::Integer(i64::MAX)).is_err());
        assert!(u32::from_sql(ValueRef::Integer(-1)).is_err());
        assert!(i64::from_sql(ValueRef::Text("7")).is_err());
        assert_eq!(Option::<i64>::from_sql(ValueRef::Null), Ok(None));
        assert_eq!(bool::from_sql(ValueRef::Integer(2)), Ok(true));
        assert_eq!(f64::from_sql(ValueRef::Integer(3)), Ok(3.0));
        assert_eq!(u64::MAX.to_sql(), ValueRef::Integer(i64::MAX));
    }

    #[test]
    fn text_and_blobs_keep_their_class() {
        assert_eq!(
            String::from_sql(ValueRef::Text("Ωμέγα")),
            Ok("Ωμέγα".into())
        );
        assert!(String::from_sql(ValueRef::Blob(b"x")).is_err());
        assert_eq!(<[u8; 2]>::from_sql(ValueRef::Blob(&[1, 2])), Ok([1, 2]));
        assert!(<[u8; 3]>::from_sql(ValueRef::Blob(&[1, 2])).is_err());
        let p = params![1_i64, "a", None::<String>, vec![0_u8]];
        let got: Vec<ValueRef<'_>> = p.iter().map(|v| v.to_sql()).collect();
        assert_eq!(
            got,
            vec![
                ValueRef::Integer(1),
                ValueRef::Text("a"),
                ValueRef::Null,
                ValueRef::Blob(&[0])
            ]
        );
    }
}
