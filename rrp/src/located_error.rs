//! [`located_error!`](crate::located_error): the error type of a wire
//! codec, a kind of failure with the field and the byte offset at which it
//! was found. rrp's codecs ([`crate::error`]) and the management datagram's
//! (mgmt) declare theirs with it, each with its own kinds.

/// Declares `Error` (a `kind` of the given enum, the `field`, the byte
/// `offset` counted from the start of the buffer handed to the outermost
/// parser), `Result<T>`, the constructors `new` and `truncated` (the kind
/// enum has a `Truncated { needed, available }` variant), `shifted`, and
/// `Display` as `field at byte N: kind` (the kind enum implements
/// `Display`).
///
/// ```
/// #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
/// pub enum ErrorKind {
///     Truncated { needed: usize, available: usize },
/// }
/// impl core::fmt::Display for ErrorKind {
///     fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
///         let ErrorKind::Truncated { needed, available } = self;
///         write!(f, "truncated: needs {needed} bytes, {available} left")
///     }
/// }
/// rrp::located_error!(ErrorKind);
/// let e = Error::truncated("hdr.len", 2, 4, 1).shifted(10);
/// assert_eq!(e.to_string(), "hdr.len at byte 12: truncated: needs 4 bytes, 1 left");
/// ```
#[macro_export]
macro_rules! located_error {
    ($kind:ident) => {
        /// A failure: what, in which field, at which byte offset.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub struct Error {
            /// What went wrong.
            pub kind: $kind,
            /// The field, e.g. `"eep.version"`, `"r5.l2rh.len"` or
            /// `"mad.base_version"`.
            pub field: &'static str,
            /// Byte offset of the field, from the start of the outermost
            /// buffer.
            pub offset: usize,
        }

        /// Result of a parse or an emit.
        pub type Result<T> = core::result::Result<T, Error>;

        impl Error {
            /// An error of `kind` in `field` at `offset`.
            pub const fn new(kind: $kind, field: &'static str, offset: usize) -> Self {
                Error {
                    kind,
                    field,
                    offset,
                }
            }

            /// The same error with its offset moved by `base` bytes: used
            /// when a parser of an inner part reports relative to that part.
            #[must_use]
            pub const fn shifted(self, base: usize) -> Self {
                Error {
                    offset: self.offset + base,
                    ..self
                }
            }

            /// A truncation error: `needed` bytes wanted at `offset`,
            /// `available` there.
            pub const fn truncated(
                field: &'static str,
                offset: usize,
                needed: usize,
                available: usize,
            ) -> Self {
                Error::new($kind::Truncated { needed, available }, field, offset)
            }
        }

        impl core::fmt::Display for Error {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                write!(f, "{} at byte {}: {}", self.field, self.offset, self.kind)
            }
        }

        impl std::error::Error for Error {}
    };
}
