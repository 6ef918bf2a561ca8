//! [`counter_set!`](crate::counter_set): the one declaration of a set of
//! counters (docs/architecture.md "Counters, timers and limits").

/// Declares a counter set: a `#[repr(C)]` struct of `u64`s and
/// [`Counts`](crate::counters::Counts) arrays that is
/// [`bytemuck::Pod`], and its [`CounterSet`](crate::counters::CounterSet)
/// description. Each field is `name: type => counter|gauge "family"`, with
/// `by "label"` after a `Counts` field; its doc comment is its help text
/// (Prometheus `# HELP`, docs/stats.md). `in "prefix"` names the Prometheus
/// prefix (`mwrouter_<prefix>_<family>_total`).
///
/// ```
/// rrp::counter_set! {
///     /// What a queue saw.
///     pub struct QueueStats in "queue" {
///         /// Packets queued.
///         pub queued: u64 => counter "queued_packets",
///         /// Packets dropped, by reason.
///         pub dropped: rrp::DropCounts => counter "dropped_packets" by "reason",
///         /// Packets in the queue now.
///         pub depth: u64 => gauge "depth",
///     }
/// }
/// use rrp::counters::CounterSet;
/// let mut q = QueueStats::default();
/// q.dropped[rrp::DropReason::Mtu] += 1;
/// assert_eq!(q.get("dropped.mtu"), Some(1));
/// assert_eq!(QueueStats::FIELDS[0].help, "Packets queued.");
/// ```
#[macro_export]
macro_rules! counter_set {
    (
        $(#[doc = $doc:literal])*
        $vis:vis struct $name:ident in $prefix:literal {
            $(
                $(#[doc = $fdoc:literal])*
                $fvis:vis $field:ident : $ty:ty => $kind:ident $family:literal $(by $label:literal)?
            ),* $(,)?
        }
    ) => {
        $(#[doc = $doc])*
        #[repr(C)]
        #[derive(
            Clone,
            Copy,
            PartialEq,
            Eq,
            Debug,
            $crate::counters::bytemuck::Pod,
            $crate::counters::bytemuck::Zeroable
        )]
        #[bytemuck(crate = "::rrp::counters::bytemuck")]
        $vis struct $name {
            $(
                $(#[doc = $fdoc])*
                $fvis $field: $ty,
            )*
        }

        impl Default for $name {
            fn default() -> Self {
                $crate::counters::bytemuck::Zeroable::zeroed()
            }
        }

        impl $crate::counters::CounterSet for $name {
            const PREFIX: &'static str = $prefix;
            const FIELDS: &'static [$crate::counters::Field] = &[
                $(
                    $crate::counters::Field {
                        name: stringify!($field),
                        family: $family,
                        help: concat!($($fdoc),*).trim_ascii(),
                        kind: $crate::__counter_kind!($kind),
                        labels: $crate::__counter_labels!($ty $(, $label)?),
                    },
                )*
            ];
        }
    };
}

/// The [`Kind`](crate::counters::Kind) of a field of [`counter_set!`].
#[doc(hidden)]
#[macro_export]
macro_rules! __counter_kind {
    (counter) => {
        $crate::counters::Kind::Counter
    };
    (gauge) => {
        $crate::counters::Kind::Gauge
    };
}

/// The [`Labels`](crate::counters::Labels) of a field of [`counter_set!`]:
/// a `Counts` field needs `by "label"`, a `u64` takes none.
#[doc(hidden)]
#[macro_export]
macro_rules! __counter_labels {
    ($ty:ty) => {{
        assert!(
            <$ty as $crate::counters::Value>::LABELS.is_none(),
            "a field of Counts needs `by \"label\"`"
        );
        None
    }};
    ($ty:ty, $key:literal) => {
        Some($crate::counters::Labels {
            key: $key,
            values: match <$ty as $crate::counters::Value>::LABELS {
                Some(v) => v,
                None => panic!("`by \"label\"` goes with a field of Counts"),
            },
        })
    };
}
