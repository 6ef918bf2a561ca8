//! [`named_enum!`](crate::named_enum): an enum whose variants have names
//! (drop reasons, refusals), declared once with them, and optionally the
//! array of one counter per variant that counter sets hold
//! (docs/architecture.md "Counters, timers and limits").

/// Declares a fieldless enum whose variants carry their names: the enum
/// (`#[repr(u8)]`, in declaration order), `COUNT`, `ALL`, `NAMES`, `name()`,
/// `from_name()` and `Display`. With `counted by Counts`, also `Counts`: one
/// `u64` per variant, indexed by the enum or by name, a field type of
/// [`counter_set!`](crate::counter_set) (`dropped: DropCounts => counter
/// "dropped_packets" by "reason"`).
///
/// ```
/// rrp::named_enum! {
///     /// Why a queue refused a packet.
///     pub enum Refusal counted by RefusalCounts {
///         /// Full.
///         Full = "full",
///         /// Too big.
///         TooBig = "too-big",
///     }
/// }
/// assert_eq!(Refusal::TooBig.name(), "too-big");
/// assert_eq!(Refusal::from_name("full"), Some(Refusal::Full));
/// let mut c = RefusalCounts::default();
/// c[Refusal::TooBig] += 2;
/// assert_eq!(c["too-big"], 2);
/// assert_eq!(c.total(), 2);
/// ```
#[macro_export]
macro_rules! named_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident $(counted by $counts:ident)? {
            $(
                $(#[doc = $vdoc:literal])*
                $variant:ident = $vname:literal
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        $vis enum $name {
            $(
                $(#[doc = $vdoc])*
                $variant,
            )*
        }

        impl $name {
            /// Number of variants.
            pub const COUNT: usize = [$($vname),*].len();

            /// Every variant, in declaration (counter) order.
            pub const ALL: [$name; $name::COUNT] = [$($name::$variant),*];

            /// Every variant's name, in declaration order.
            pub const NAMES: [&'static str; $name::COUNT] = [$($vname),*];

            /// Its name in counters, logs and captures.
            pub const fn name(self) -> &'static str {
                Self::NAMES[self as usize]
            }

            /// The variant with this name.
            pub fn from_name(name: &str) -> Option<$name> {
                Self::ALL.iter().copied().find(|v| v.name() == name)
            }
        }

        impl core::fmt::Display for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str(self.name())
            }
        }

        $($crate::__named_enum_counts!($vis $name $counts);)?
    };
}

/// The `Counts` type of [`named_enum!`].
#[doc(hidden)]
#[macro_export]
macro_rules! __named_enum_counts {
    ($vis:vis $name:ident $counts:ident) => {
        #[doc = concat!("One counter per [`", stringify!($name), "`], indexed by it (or by its name).")]
        #[repr(transparent)]
        #[derive(
            Clone,
            Copy,
            PartialEq,
            Eq,
            $crate::counters::bytemuck::Pod,
            $crate::counters::bytemuck::Zeroable
        )]
        #[bytemuck(crate = "::rrp::counters::bytemuck")]
        $vis struct $counts(pub [u64; $name::COUNT]);

        impl Default for $counts {
            fn default() -> Self {
                $counts([0; $name::COUNT])
            }
        }

        impl core::fmt::Debug for $counts {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.debug_map().entries(self.iter().map(|(k, v)| (k.name(), v))).finish()
            }
        }

        impl core::ops::Index<$name> for $counts {
            type Output = u64;
            #[inline(always)]
            fn index(&self, i: $name) -> &u64 {
                &self.0[i as usize]
            }
        }

        impl core::ops::IndexMut<$name> for $counts {
            #[inline(always)]
            fn index_mut(&mut self, i: $name) -> &mut u64 {
                &mut self.0[i as usize]
            }
        }

        impl core::ops::Index<&str> for $counts {
            type Output = u64;
            /// The counter of the variant named so; panics for a name that
            /// is none of the variants'.
            fn index(&self, name: &str) -> &u64 {
                match $name::from_name(name) {
                    Some(i) => &self.0[i as usize],
                    None => panic!("no {} named {name:?}", stringify!($name)),
                }
            }
        }

        impl $counts {
            /// The counter of the variant named `name`.
            pub fn get(&self, name: &str) -> Option<u64> {
                $name::from_name(name).map(|i| self.0[i as usize])
            }

            /// Each variant with its counter, in declaration order.
            pub fn iter(&self) -> impl Iterator<Item = ($name, u64)> + '_ {
                $name::ALL.iter().map(|v| (*v, self.0[*v as usize]))
            }

            /// The sum of every counter.
            pub fn total(&self) -> u64 {
                self.0.iter().fold(0u64, |a, v| a.wrapping_add(*v))
            }

            /// Number of counters (of variants).
            pub const fn len(&self) -> usize {
                $name::COUNT
            }

            /// Always false: an enum has at least one variant.
            pub const fn is_empty(&self) -> bool {
                $name::COUNT == 0
            }
        }

        impl $crate::counters::Value for $counts {
            const LABELS: Option<&'static [&'static str]> = Some(&$name::NAMES);
        }

        impl $crate::counters::Counts for $counts {
            type Name = $name;
            fn as_array(&self) -> &[u64] {
                &self.0
            }
        }
    };
}
