//! Ports: a box has one port per SAN it attaches to, and each port is one of
//! its Half-Routers (Part-2, "Inter-SAN mapping": a router is made of HRs,
//! one per SAN; docs/architecture.md "Who uses it"). The router engine, the
//! dataplane, the control plane and the tools all name a port by its
//! [`PortId`], the HR's position in the box's configuration.

use core::fmt;
use core::ops::{Deref, DerefMut, Index, IndexMut};

/// A port of a box, numbered from 0 in configuration order (a number in
/// JSON).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(transparent)
)]
pub struct PortId(pub u16);

impl PortId {
    /// Port `i`. Panics when `i` does not fit 16 bits (a box has at most
    /// [`crate::limits::MAX_PORTS`]; the configuration refuses more).
    #[inline]
    pub const fn new(i: usize) -> PortId {
        assert!(i <= u16::MAX as usize, "port index above 65535");
        PortId(i as u16)
    }

    /// The port's position, to index per-port tables.
    #[inline(always)]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// Ports `0..n`.
    pub fn all(n: usize) -> impl DoubleEndedIterator<Item = PortId> + ExactSizeIterator + Clone {
        (0..n).map(PortId::new)
    }
}

impl fmt::Display for PortId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl From<u16> for PortId {
    fn from(p: u16) -> PortId {
        PortId(p)
    }
}

impl From<PortId> for usize {
    fn from(p: PortId) -> usize {
        p.index()
    }
}

/// One `T` per port of a box, indexed by [`PortId`] (and a slice of the
/// values in port order).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PerPort<T>(Vec<T>);

impl<T> PerPort<T> {
    /// The values of ports `0..v.len()`, in port order.
    pub fn new(v: Vec<T>) -> PerPort<T> {
        PerPort(v)
    }

    /// Whether `p` is one of the ports.
    #[inline]
    pub fn has(&self, p: PortId) -> bool {
        p.index() < self.0.len()
    }

    /// The value of port `p`, if the box has that port.
    #[inline]
    pub fn get(&self, p: PortId) -> Option<&T> {
        self.0.get(p.index())
    }

    /// The value of port `p`, writable, if the box has that port.
    #[inline]
    pub fn get_mut(&mut self, p: PortId) -> Option<&mut T> {
        self.0.get_mut(p.index())
    }

    /// Every port.
    pub fn ids(
        &self,
    ) -> impl DoubleEndedIterator<Item = PortId> + ExactSizeIterator + Clone + use<T> {
        PortId::all(self.0.len())
    }

    /// Every port with its value.
    pub fn enumerate(&self) -> impl DoubleEndedIterator<Item = (PortId, &T)> + ExactSizeIterator {
        self.0.iter().enumerate().map(|(i, v)| (PortId::new(i), v))
    }

    /// Every port with its value, writable.
    pub fn enumerate_mut(
        &mut self,
    ) -> impl DoubleEndedIterator<Item = (PortId, &mut T)> + ExactSizeIterator {
        self.0
            .iter_mut()
            .enumerate()
            .map(|(i, v)| (PortId::new(i), v))
    }

    /// The values, in port order.
    pub fn into_vec(self) -> Vec<T> {
        self.0
    }
}

impl<T> Deref for PerPort<T> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        &self.0
    }
}

impl<T> DerefMut for PerPort<T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.0
    }
}

impl<'a, T> IntoIterator for &'a PerPort<T> {
    type Item = &'a T;
    type IntoIter = core::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl<'a, T> IntoIterator for &'a mut PerPort<T> {
    type Item = &'a mut T;
    type IntoIter = core::slice::IterMut<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter_mut()
    }
}

impl<T> From<Vec<T>> for PerPort<T> {
    fn from(v: Vec<T>) -> PerPort<T> {
        PerPort(v)
    }
}

impl<T> Index<PortId> for PerPort<T> {
    type Output = T;
    #[inline]
    fn index(&self, p: PortId) -> &T {
        &self.0[p.index()]
    }
}

impl<T> IndexMut<PortId> for PerPort<T> {
    #[inline]
    fn index_mut(&mut self, p: PortId) -> &mut T {
        &mut self.0[p.index()]
    }
}

impl<T> FromIterator<T> for PerPort<T> {
    fn from_iter<I: IntoIterator<Item = T>>(it: I) -> PerPort<T> {
        PerPort(it.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_tables() {
        let mut t: PerPort<u32> = PortId::all(3).map(|p| p.0 as u32 * 10).collect();
        assert_eq!(t[PortId(2)], 20);
        t[PortId(1)] += 1;
        assert_eq!(*t, [0, 11, 20]);
        assert!(t.has(PortId(2)) && !t.has(PortId(3)));
        assert_eq!(t.get(PortId(3)), None);
        assert_eq!(
            t.enumerate()
                .map(|(p, v)| (p.index(), *v))
                .collect::<Vec<_>>(),
            vec![(0, 0), (1, 11), (2, 20)]
        );
        assert_eq!(PortId(7).to_string(), "7");
        assert_eq!(usize::from(PortId(7)), 7);
    }
}
