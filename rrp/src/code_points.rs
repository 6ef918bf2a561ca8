//! [`code_points!`](crate::code_points): an enum of the numbers a field
//! carries on the wire (the draft's message numbers, error codes, record
//! types, capability codes; SMInfo's states), each variant declared once
//! with its number and its name.

/// Declares a fieldless enum of code points: each variant is
/// `Variant = number => "name"`. It gives the enum (`#[repr]` of the
/// field's type, the caller's derives kept), `ALL`, `from_code` (the
/// variant of a number, `None` for numbers the enum does not assign) and
/// `name`. `variant as u16` (or the repr) is the number.
///
/// ```
/// rrp::code_points! {
///     /// A colour on the wire.
///     #[derive(Debug, Clone, Copy, PartialEq, Eq)]
///     pub enum Colour: u8 {
///         /// Red.
///         Red = 1 => "red",
///         /// Blue.
///         Blue = 7 => "blue",
///     }
/// }
/// assert_eq!(Colour::from_code(7), Some(Colour::Blue));
/// assert_eq!(Colour::from_code(2), None);
/// assert_eq!(Colour::Red.name(), "red");
/// assert_eq!(Colour::Blue as u8, 7);
/// assert_eq!(Colour::ALL.len(), 2);
/// ```
#[macro_export]
macro_rules! code_points {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident : $repr:ty {
            $(
                $(#[doc = $vdoc:literal])*
                $variant:ident = $value:literal => $vname:literal
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[repr($repr)]
        $vis enum $name {
            $(
                $(#[doc = $vdoc])*
                $variant = $value,
            )*
        }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),*];

            /// The variant of the number `code`, if it is one of these.
            pub const fn from_code(code: $repr) -> Option<$name> {
                match code {
                    $($value => Some($name::$variant),)*
                    _ => None,
                }
            }

            /// Its name in displays, logs and counters.
            pub const fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $vname,)*
                }
            }
        }
    };
}
