//! Routes as lists of hops in mwrouter's L2RH layout (docs/architecture.md "Source
//! routes: the router is one hop").
//!
//! On a SAN a hop is a native address; crossing a router it is an egress HR.
//! A [`RouterHop`] with egress 0x0000 is "native hop only, on the SAN where
//! the route starts"; one with an empty native part is "egress only".
//! Catenating a route that ends with an egress-only hop and one that starts
//! with a native-only hop merges the two into one hop (the twin hop of the
//! draft's `*:Rad->Rda` and the next SAN's `D:Rda->node` become the one L2RH
//! that router `ad` consumes).

use crate::error::Result;
use crate::limits::MAX_L2RHS;
use crate::wire::hop::RouterHop;
use crate::wire::l2rh::L2rhRepr;

/// A route: hops from where it starts to where it ends.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct Route(pub Vec<RouterHop>);

impl Route {
    /// The empty route (the HR itself).
    pub fn empty() -> Route {
        Route(Vec::new())
    }

    /// Number of hops (= L2RHs on the wire).
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the route has no hop.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The first hop.
    pub fn first(&self) -> Option<&RouterHop> {
        self.0.first()
    }

    /// `self` followed by `rest`, merging an egress-only last hop of `self`
    /// with a native-only first hop of `rest`.
    pub fn catenate(&self, rest: &Route) -> Route {
        let mut out = self.0.clone();
        let mut it = rest.0.iter();
        if let (Some(last), Some(first)) = (out.last_mut(), rest.0.first())
            && last.is_egress_only()
            && !last.is_native_only()
            && first.is_native_only()
        {
            last.native = first.native;
            it.next();
        }
        out.extend(it.cloned());
        Route(out)
    }

    /// The route as a chain of L2RHs.
    pub fn to_l2rhs(&self) -> Vec<L2rhRepr> {
        self.0.iter().map(RouterHop::to_l2rh).collect()
    }

    /// A route from a chain of L2RHs, each of which must be a router hop.
    pub fn from_l2rhs(l2rhs: &[L2rhRepr]) -> Result<Route> {
        l2rhs
            .iter()
            .map(|l| RouterHop::from_content(l.content()))
            .collect::<Result<Vec<_>>>()
            .map(Route)
    }

    /// Whether the route may be offered or forwarded (at most [`MAX_L2RHS`] hops).
    pub fn within_limit(&self) -> bool {
        self.0.len() <= MAX_L2RHS
    }

    /// Bytes of L2RHs this route puts in front of a packet.
    pub fn l2rh_bytes(&self) -> usize {
        self.0
            .iter()
            .map(|h| crate::wire::l2rh::l2rh_bytes(2 + h.native.len()))
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::address::Address;
    use crate::native::NativeAddr;

    fn n(b: &[u8]) -> NativeAddr {
        NativeAddr::from_bytes(b).unwrap()
    }

    #[test]
    fn twin_hop_merges_with_the_next_san_hop() {
        let twin = Route(vec![RouterHop::egress(Address(0x0120))]);
        let next = Route(vec![
            RouterHop::native(n(&[2, 0, 0, 0, 0, 7])),
            RouterHop::egress(Address(0x0130)),
        ]);
        let r = twin.catenate(&next);
        assert_eq!(
            r.0,
            vec![
                RouterHop::new(Address(0x0120), n(&[2, 0, 0, 0, 0, 7])),
                RouterHop::egress(Address(0x0130))
            ]
        );
        // Native-only then native-only: no merge.
        let a = Route(vec![RouterHop::native(n(&[1]))]);
        assert_eq!(a.catenate(&a).len(), 2);
        // Empty routes.
        assert_eq!(Route::empty().catenate(&a), a);
        assert_eq!(a.catenate(&Route::empty()), a);
    }

    #[test]
    fn wire_round_trip() {
        let r = Route(vec![
            RouterHop::native(n(&[2, 0, 0, 0, 0, 1])),
            RouterHop::new(Address(0x0120), n(&[2, 0, 0, 0, 0, 2])),
            RouterHop::egress(Address(0x0130)),
        ]);
        let l = r.to_l2rhs();
        assert_eq!(Route::from_l2rhs(&l).unwrap(), r);
        assert_eq!(r.l2rh_bytes(), 16 + 16 + 8);
        assert!(Route::from_l2rhs(&[L2rhRepr::new(&[1]).unwrap()]).is_err());
    }
}
