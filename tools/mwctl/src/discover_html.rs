//! `mwctl discover --html FILE`: the network as one self-contained page
//! (docs/management.md "mwctl discover"). The map is inline SVG laid out
//! here, deterministically: SANs start on a ring (in the order a walk over
//! the routers meets them), each router between the SANs it joins, then a
//! force layout settles them and overlapping nodes are pushed apart. SANs
//! are rounded nodes (id, MTU, cost), routers boxes (description,
//! address), each HR an edge in its state's colour with its port's error
//! count as a badge, and a node that did not answer a red dashed box on
//! the SAN whose LRT named it. A legend, a summary and the tables
//! (routers, HRs, SANs, nodes that did not answer) go with it; CSS and a
//! little script (hovering a node or a row lights its neighbours) are
//! inline, so the page fetches nothing. Every string from the network is
//! escaped.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use rrp::Address;

use crate::discover::{
    Discovery, Member, MemberSource, Reached, Router, level_name, node_type_name, state_name,
};

/// `s` escaped for HTML text and attribute values.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c if c.is_control() => o.push('\u{fffd}'),
            c => o.push(c),
        }
    }
    o
}

/// `s` cut to `n` characters, with an ellipsis when cut.
fn cut(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// What a node of the map stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A SAN.
    San,
    /// A router that answered (index into `Discovery::routers`).
    Router(usize),
    /// A node that did not answer (index into `Discovery::unanswered`).
    Silent(usize),
    /// A member of a SAN, a host most often (indices into
    /// `Discovery::sans` and its `members`).
    Member(usize, usize),
}

/// A node of the map: its key (the element id), what it is, and its box
/// (centre and size, in the SVG's units).
#[derive(Debug, Clone, PartialEq)]
pub struct MapNode {
    /// The element id: `san-0x0201`, `r-0x...` (identity), `u-0x0231`,
    /// `h-0x0100` (a member).
    pub key: String,
    /// What it stands for.
    pub kind: Kind,
    /// Centre x.
    pub x: f64,
    /// Centre y.
    pub y: f64,
    /// Width.
    pub w: f64,
    /// Height.
    pub h: f64,
}

/// What an edge of the map draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Link {
    /// An HR: (router index, HR index).
    Hr(usize, usize),
    /// A SAN to a node on it that did not answer.
    Silent,
    /// A SAN to a member.
    Member,
}

/// An edge of the map: an HR (router to SAN), or a SAN to a node on it
/// (a member, or a node that did not answer).
#[derive(Debug, Clone, PartialEq)]
pub struct MapEdge {
    /// Node index of the router (or of the SAN).
    pub from: usize,
    /// Node index of the SAN (or of the node on it).
    pub to: usize,
    /// What it draws.
    pub link: Link,
}

/// The map: nodes placed, edges, and the drawing's size.
#[derive(Debug, Clone, PartialEq)]
pub struct Map {
    /// The nodes.
    pub nodes: Vec<MapNode>,
    /// The edges.
    pub edges: Vec<MapEdge>,
    /// Width of the drawing.
    pub width: f64,
    /// Height of the drawing.
    pub height: f64,
}

/// The room between nodes and around the drawing.
const GAP: f64 = 18.0;
const MARGIN: f64 = 40.0;
/// The rest length of an edge in the force layout, centre to centre.
const EDGE: f64 = 170.0;
/// The rest length of a member's edge (it has no label).
const MEMBER_EDGE: f64 = 90.0;
/// The least room an edge has between its boxes.
const MIN_EDGE: f64 = 140.0;

impl MapEdge {
    /// Its rest length in the force layout.
    fn rest(&self) -> f64 {
        match self.link {
            Link::Member => MEMBER_EDGE,
            _ => EDGE,
        }
    }

    /// The least room it has between its boxes.
    fn least(&self) -> f64 {
        match self.link {
            Link::Hr(..) => MIN_EDGE,
            _ => 2.0 * GAP,
        }
    }
}

fn router_key(r: &Router) -> String {
    format!("r-{:#018x}", r.identity)
}

fn san_key(id: Address) -> String {
    format!("san-{id}")
}

/// The SAN an HR address is on, among the routers read.
fn san_of_hr(d: &Discovery, hr: Address) -> Option<Address> {
    d.routers
        .iter()
        .flat_map(|r| r.hrs.iter().filter_map(|h| h.info.as_ref()))
        .find(|i| i.address == hr)
        .map(|i| i.san)
}

/// A router box's size for its two lines.
fn router_size(r: &Router) -> (f64, f64) {
    let desc = cut(display_name(r).as_str(), 24).chars().count() as f64;
    let w = (desc * 7.6).max(15.0 * 6.6) + 28.0;
    (w.clamp(110.0, 230.0), 48.0)
}

fn member_key(m: &Member) -> String {
    format!("h-{}", m.address)
}

/// A member's one line: its description (or type) and address.
fn member_label(m: &Member) -> String {
    let name = if m.description.is_empty() {
        node_type_name(m.node_type).to_string()
    } else {
        cut(&m.description, 16)
    };
    format!("{name} {}", m.address)
}

fn member_size(m: &Member) -> (f64, f64) {
    (member_label(m).chars().count() as f64 * 6.4 + 22.0, 24.0)
}

fn display_name(r: &Router) -> String {
    if r.description.is_empty() {
        format!("{:#018x}", r.identity)
    } else {
        r.description.clone()
    }
}

/// The SANs in the order a breadth-first walk over the routers meets
/// them from `root` (then from the SANs it did not reach), so that SANs a
/// router joins sit next to each other on a ring.
fn san_order(on: &[Vec<usize>], n_sans: usize, root: usize) -> Vec<usize> {
    let mut order = Vec::with_capacity(n_sans);
    if root >= n_sans {
        return order;
    }
    let mut seen = vec![false; n_sans];
    for first in std::iter::once(root).chain(0..n_sans) {
        if seen[first] {
            continue;
        }
        seen[first] = true;
        let mut queue = std::collections::VecDeque::from([first]);
        while let Some(s) = queue.pop_front() {
            order.push(s);
            for sans in on.iter().filter(|sans| sans.contains(&s)) {
                for &o in sans {
                    if !seen[o] {
                        seen[o] = true;
                        queue.push_back(o);
                    }
                }
            }
        }
    }
    order
}

/// Lays out the map of `d` (deterministic: the same discovery gives the
/// same map). Several starts are settled (the SANs on a ring in the order
/// of a walk from each of the first SANs, with or without the busiest SAN
/// in the middle), and the one with the fewest crossing edges is kept.
pub fn layout(d: &Discovery) -> Map {
    let mut nodes = Vec::new();
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    for san in &d.sans {
        index.insert(san_key(san.id), nodes.len());
        nodes.push(MapNode {
            key: san_key(san.id),
            kind: Kind::San,
            x: 0.0,
            y: 0.0,
            w: 150.0,
            h: 48.0,
        });
    }
    let n_sans = nodes.len();
    let mut edges = Vec::new();
    // Each router's SANs (node indices).
    let mut on: Vec<Vec<usize>> = Vec::new();
    for (ri, r) in d.routers.iter().enumerate() {
        let me = nodes.len();
        let (w, h) = router_size(r);
        index.insert(router_key(r), me);
        nodes.push(MapNode {
            key: router_key(r),
            kind: Kind::Router(ri),
            x: 0.0,
            y: 0.0,
            w,
            h,
        });
        let mut mine = Vec::new();
        for (hi, h) in r.hrs.iter().enumerate() {
            if let Some(&s) = h.info.as_ref().and_then(|i| index.get(&san_key(i.san))) {
                edges.push(MapEdge {
                    from: me,
                    to: s,
                    link: Link::Hr(ri, hi),
                });
                mine.push(s);
            }
        }
        on.push(mine);
    }
    // Each silent node's anchor: the SAN whose LRT named it, else the
    // router; then each member's, its SAN.
    let mut anchors = Vec::new();
    for (ui, u) in d.unanswered.iter().enumerate() {
        let key = format!("u-{}", u.address);
        let anchor = match u.reached {
            Reached::Lrt { by, hr } => san_of_hr(d, hr)
                .and_then(|s| index.get(&san_key(s)))
                .or_else(|| index.get(&format!("r-{by:#018x}")))
                .copied(),
            Reached::Start | Reached::Manager { .. } => None,
        };
        let me = nodes.len();
        index.insert(key.clone(), me);
        nodes.push(MapNode {
            key,
            kind: Kind::Silent(ui),
            x: 0.0,
            y: 0.0,
            w: 118.0,
            h: 44.0,
        });
        if let Some(a) = anchor {
            edges.push(MapEdge {
                from: a,
                to: me,
                link: Link::Silent,
            });
        }
        anchors.push(anchor);
    }
    for (si, san) in d.sans.iter().enumerate() {
        for (mi, m) in san.members.iter().enumerate() {
            let me = nodes.len();
            let (w, h) = member_size(m);
            nodes.push(MapNode {
                key: member_key(m),
                kind: Kind::Member(si, mi),
                x: 0.0,
                y: 0.0,
                w,
                h,
            });
            edges.push(MapEdge {
                from: si,
                to: me,
                link: Link::Member,
            });
            anchors.push(Some(si));
        }
    }
    let busiest =
        (0..n_sans).max_by_key(|&s| (on.iter().filter(|o| o.contains(&s)).count(), usize::MAX - s));
    // A large network is settled once (each start costs a force layout).
    let roots = n_sans.clamp(1, 6);
    let variants = if nodes.len() > 60 { 1 } else { roots * 2 };
    let mut best: Option<(f64, Vec<MapNode>)> = None;
    for variant in 0..variants {
        let root = variant % roots;
        let centre = if variant >= roots { busiest } else { None };
        let order = san_order(&on, n_sans, root);
        let mut trial = nodes.clone();
        place(&mut trial, &order, centre, &on, &anchors);
        settle(&mut trial, &edges);
        let score = crossings(&trial, &edges) as f64 * 1e6 + spread(&trial, &edges);
        if best.as_ref().is_none_or(|(b, _)| score < *b) {
            best = Some((score, trial));
        }
    }
    if let Some((_, b)) = best {
        nodes = b;
    }
    tidy(&mut nodes, &edges);
    // Into the drawing, with a margin.
    let min_x = nodes
        .iter()
        .map(|n| n.x - n.w / 2.0)
        .fold(f64::MAX, f64::min);
    let min_y = nodes
        .iter()
        .map(|n| n.y - n.h / 2.0)
        .fold(f64::MAX, f64::min);
    let max_x = nodes
        .iter()
        .map(|n| n.x + n.w / 2.0)
        .fold(f64::MIN, f64::max);
    let max_y = nodes
        .iter()
        .map(|n| n.y + n.h / 2.0)
        .fold(f64::MIN, f64::max);
    let (width, height) = if nodes.is_empty() {
        (400.0, 160.0)
    } else {
        for n in &mut nodes {
            n.x = (n.x - min_x + MARGIN).round();
            n.y = (n.y - min_y + MARGIN).round();
        }
        (
            (max_x - min_x + 2.0 * MARGIN).ceil(),
            (max_y - min_y + 2.0 * MARGIN).ceil(),
        )
    };
    Map {
        nodes,
        edges,
        width,
        height,
    }
}

/// The start of a layout: the SANs on a ring in `order` (`centre` in the
/// middle), each router between its SANs (beyond its one SAN), each silent
/// node and member beyond its anchor; nodes on the same spot spread by a
/// golden angle.
fn place(
    nodes: &mut [MapNode],
    order: &[usize],
    centre: Option<usize>,
    on: &[Vec<usize>],
    anchors: &[Option<usize>],
) {
    let ring: Vec<usize> = order
        .iter()
        .copied()
        .filter(|&s| Some(s) != centre)
        .collect();
    let n = ring.len().max(1) as f64;
    let radius = 95.0 * n.max(2.0);
    for (i, &s) in ring.iter().enumerate() {
        let a = std::f64::consts::TAU * i as f64 / n - std::f64::consts::FRAC_PI_2;
        (nodes[s].x, nodes[s].y) = if order.len() == 1 {
            (0.0, 0.0)
        } else {
            (radius * a.cos(), radius * a.sin())
        };
    }
    if let Some(c) = centre {
        (nodes[c].x, nodes[c].y) = (0.0, 0.0);
    }
    let n_sans = order.len();
    let outward = |x: f64, y: f64, by: f64| {
        let len = x.hypot(y).max(1.0);
        if x == 0.0 && y == 0.0 {
            (0.0, by)
        } else {
            (x + x / len * by, y + y / len * by)
        }
    };
    for (ri, sans) in on.iter().enumerate() {
        let spin = ri as f64 * 2.399_963;
        let (mut x, mut y) = (0.0, 0.0);
        if !sans.is_empty() {
            let k = sans.len() as f64;
            x = sans.iter().map(|&s| nodes[s].x).sum::<f64>() / k;
            y = sans.iter().map(|&s| nodes[s].y).sum::<f64>() / k;
        }
        if sans.len() == 1 {
            (x, y) = outward(x, y, 150.0);
        }
        let me = n_sans + ri;
        nodes[me].x = x + 30.0 * spin.cos();
        nodes[me].y = y + 30.0 * spin.sin();
    }
    for (ui, anchor) in anchors.iter().enumerate() {
        let spin = ui as f64 * 2.399_963;
        let (ax, ay) = anchor.map_or((0.0, 0.0), |a| (nodes[a].x, nodes[a].y));
        let (x, y) = outward(ax, ay, 120.0);
        let me = n_sans + on.len() + ui;
        nodes[me].x = x + 30.0 * spin.cos();
        nodes[me].y = y + 30.0 * spin.sin();
    }
}

/// How many pairs of edges (without a common end) cross.
fn crossings(nodes: &[MapNode], edges: &[MapEdge]) -> usize {
    let cross = |a: (f64, f64), b: (f64, f64), c: (f64, f64), d: (f64, f64)| {
        let side = |p: (f64, f64), q: (f64, f64), r: (f64, f64)| {
            (q.0 - p.0) * (r.1 - p.1) - (q.1 - p.1) * (r.0 - p.0)
        };
        side(a, b, c) * side(a, b, d) < 0.0 && side(c, d, a) * side(c, d, b) < 0.0
    };
    let at = |i: usize| (nodes[i].x, nodes[i].y);
    let mut n = 0;
    for (i, e) in edges.iter().enumerate() {
        for f in &edges[i + 1..] {
            if e.from == f.from || e.from == f.to || e.to == f.from || e.to == f.to {
                continue;
            }
            if cross(at(e.from), at(e.to), at(f.from), at(f.to)) {
                n += 1;
            }
        }
    }
    n
}

/// How far the edges are from their rest length, in all.
fn spread(nodes: &[MapNode], edges: &[MapEdge]) -> f64 {
    edges
        .iter()
        .map(|e| {
            let (a, b) = (&nodes[e.from], &nodes[e.to]);
            ((a.x - b.x).hypot(a.y - b.y) - e.rest()).abs()
        })
        .sum()
}

/// After the force layout: no two boxes overlap ([`GAP`] between them),
/// and no edge is so short between its boxes that its label and badge do
/// not fit ([`MIN_EDGE`] for an HR).
fn tidy(nodes: &mut [MapNode], edges: &[MapEdge]) {
    for _ in 0..100 {
        let mut moved = separate(nodes);
        for e in edges {
            let (a, b) = (&nodes[e.from], &nodes[e.to]);
            let (x1, y1) = border(a, b.x, b.y);
            let (x2, y2) = border(b, a.x, a.y);
            let room = (x2 - x1).hypot(y2 - y1);
            let (dx, dy) = (b.x - a.x, b.y - a.y);
            let d = dx.hypot(dy);
            // Boxes that overlap are separate's to part.
            if room >= e.least() || d < 1.0 || (x2 - x1) * dx + (y2 - y1) * dy < 0.0 {
                continue;
            }
            let push = (e.least() - room) / 2.0 + 0.5;
            let (ux, uy) = (dx / d * push, dy / d * push);
            nodes[e.from].x -= ux;
            nodes[e.from].y -= uy;
            nodes[e.to].x += ux;
            nodes[e.to].y += uy;
            moved = true;
        }
        if !moved {
            return;
        }
    }
    // Overlaps go first.
    for _ in 0..200 {
        if !separate(nodes) {
            return;
        }
    }
}

/// A force layout (Fruchterman and Reingold): nodes push each other away,
/// edges pull their ends together, a weak pull keeps the parts together;
/// the steps shrink as it cools.
fn settle(nodes: &mut [MapNode], edges: &[MapEdge]) {
    let n = nodes.len();
    if n < 2 {
        return;
    }
    let k = 75.0_f64;
    let rounds = 400;
    for round in 0..rounds {
        let heat = 40.0 * (1.0 - f64::from(round) / f64::from(rounds)) + 0.5;
        let mut force = vec![(0.0_f64, 0.0_f64); n];
        for i in 0..n {
            for j in (i + 1)..n {
                let (dx, dy) = (nodes[i].x - nodes[j].x, nodes[i].y - nodes[j].y);
                let d = dx.hypot(dy).max(1.0);
                // Members, small, push less.
                let weight = |n: &MapNode| match n.kind {
                    Kind::Member(..) => 0.45,
                    _ => 1.0,
                };
                let f = k * k * weight(&nodes[i]) * weight(&nodes[j]) / d;
                // Two nodes on the same spot part along a fixed direction.
                let (ux, uy) = if dx == 0.0 && dy == 0.0 {
                    (1.0, 0.0)
                } else {
                    (dx / d, dy / d)
                };
                force[i].0 += ux * f;
                force[i].1 += uy * f;
                force[j].0 -= ux * f;
                force[j].1 -= uy * f;
            }
        }
        for e in edges {
            let (a, b) = (&nodes[e.from], &nodes[e.to]);
            let (dx, dy) = (a.x - b.x, a.y - b.y);
            let d = dx.hypot(dy).max(1.0);
            // A spring of its rest length between the centres: room for
            // the HR's label and badge between the boxes.
            let f = 1.5 * (d - e.rest());
            force[e.from].0 -= dx / d * f;
            force[e.from].1 -= dy / d * f;
            force[e.to].0 += dx / d * f;
            force[e.to].1 += dy / d * f;
        }
        for (node, (fx, fy)) in nodes.iter_mut().zip(force) {
            let (fx, fy) = (
                fx - node.x * 0.05 * k / 100.0,
                fy - node.y * 0.05 * k / 100.0,
            );
            let f = fx.hypot(fy);
            if f > 0.0 {
                node.x += fx / f * f.min(heat);
                node.y += fy / f * f.min(heat);
            }
        }
    }
}

/// Pushes apart the nodes whose boxes (with [`GAP`] around them) overlap,
/// along the axis where they overlap least; whether it moved any.
fn separate(nodes: &mut [MapNode]) -> bool {
    let mut moved = false;
    for i in 0..nodes.len() {
        for j in (i + 1)..nodes.len() {
            let (a, b) = (&nodes[i], &nodes[j]);
            let ox = (a.w + b.w) / 2.0 + GAP - (a.x - b.x).abs();
            let oy = (a.h + b.h) / 2.0 + GAP - (a.y - b.y).abs();
            if ox <= 0.0 || oy <= 0.0 {
                continue;
            }
            moved = true;
            if ox < oy {
                let s = if a.x < b.x { -1.0 } else { 1.0 };
                nodes[i].x += s * (ox / 2.0 + 0.5);
                nodes[j].x -= s * (ox / 2.0 + 0.5);
            } else {
                let s = if a.y < b.y { -1.0 } else { 1.0 };
                nodes[i].y += s * (oy / 2.0 + 0.5);
                nodes[j].y -= s * (oy / 2.0 + 0.5);
            }
        }
    }
    moved
}

/// Where the segment from the centre of `a` towards `(tx, ty)` leaves
/// `a`'s box.
fn border(a: &MapNode, tx: f64, ty: f64) -> (f64, f64) {
    let (dx, dy) = (tx - a.x, ty - a.y);
    if dx == 0.0 && dy == 0.0 {
        return (a.x, a.y);
    }
    let tx_ = if dx == 0.0 {
        f64::MAX
    } else {
        a.w / 2.0 / dx.abs()
    };
    let ty_ = if dy == 0.0 {
        f64::MAX
    } else {
        a.h / 2.0 / dy.abs()
    };
    let t = tx_.min(ty_).min(1.0);
    (a.x + dx * t, a.y + dy * t)
}

/// The time now in UTC, `YYYY-MM-DD HH:MM:SS UTC`.
pub fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    utc_text(secs)
}

/// Seconds since 1970 as `YYYY-MM-DD HH:MM:SS UTC` (the civil calendar
/// from a day count, after Howard Hinnant's `civil_from_days`).
pub fn utc_text(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The colour class of a port state.
fn state_class(s: u8) -> &'static str {
    state_name(s)
}

/// What lights with each key when hovered: the node and its neighbours.
fn neighbours(map: &Map) -> Vec<BTreeSet<String>> {
    let mut n: Vec<BTreeSet<String>> = map
        .nodes
        .iter()
        .map(|m| BTreeSet::from([m.key.clone()]))
        .collect();
    for e in &map.edges {
        let (a, b) = (map.nodes[e.from].key.clone(), map.nodes[e.to].key.clone());
        n[e.from].insert(b);
        n[e.to].insert(a);
    }
    n
}

fn join(s: &BTreeSet<String>) -> String {
    s.iter().map(String::as_str).collect::<Vec<_>>().join(" ")
}

/// The SVG of the map.
fn render_map(d: &Discovery, map: &Map, out: &mut String) {
    let lights = neighbours(map);
    let _ = writeln!(
        out,
        "<svg id=\"map\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {w} {h}\" \
         width=\"{w}\" height=\"{h}\" role=\"img\" aria-label=\"map of the network\">",
        w = map.width,
        h = map.height
    );
    out.push_str(
        "<defs><pattern id=\"dots\" width=\"22\" height=\"22\" patternUnits=\"userSpaceOnUse\">\
         <circle cx=\"1.5\" cy=\"1.5\" r=\"1.2\" fill=\"#dbe3ee\"/></pattern>\
         <filter id=\"shadow\" x=\"-20%\" y=\"-20%\" width=\"140%\" height=\"160%\">\
         <feDropShadow dx=\"0\" dy=\"2\" stdDeviation=\"2.5\" flood-color=\"#0f172a\" flood-opacity=\"0.16\"/>\
         </filter></defs>\n<rect width=\"100%\" height=\"100%\" fill=\"url(#dots)\"/>\n",
    );
    // Edges under the nodes.
    out.push_str("<g class=\"edges\">\n");
    for e in &map.edges {
        let (a, b) = (&map.nodes[e.from], &map.nodes[e.to]);
        let (x1, y1) = border(a, b.x, b.y);
        let (x2, y2) = border(b, a.x, a.y);
        let n = format!("{} {}", a.key, b.key);
        match e.link {
            Link::Hr(ri, hi) => {
                let r = &d.routers[ri];
                let h = &r.hrs[hi];
                let Some(i) = &h.info else { continue };
                let state = state_class(i.state);
                let errors = h.errors();
                let mut tip = format!(
                    "HR {} (port {}) of {}: {state}, SAN {}, MTU {}, cost {}",
                    i.address,
                    h.port,
                    display_name(r),
                    i.san,
                    i.mtu,
                    i.cost
                );
                if let Some(e) = errors {
                    let _ = write!(tip, ", {e} errors");
                }
                let _ = writeln!(
                    out,
                    "<g class=\"el edge {state}\" data-n=\"{}\"><title>{}</title>\
                     <line x1=\"{x1:.1}\" y1=\"{y1:.1}\" x2=\"{x2:.1}\" y2=\"{y2:.1}\"/>",
                    esc(&n),
                    esc(&tip)
                );
                // The HR's address next to its router, the badge after
                // it: each takes as much of the edge as its box spans
                // along it.
                let room = (x2 - x1).hypot(y2 - y1).max(1.0);
                let (ux, uy) = ((x2 - x1) / room, (y2 - y1) / room);
                let along = |w: f64, h: f64| ux.abs() * w + uy.abs() * h;
                let label = format!("{} [{}]", i.address, h.port);
                let lw = label.chars().count() as f64 * 6.1 + 10.0;
                let at_label = 6.0 + along(lw, 16.0) / 2.0;
                let (lx, ly) = (x1 + ux * at_label, y1 + uy * at_label);
                let _ = writeln!(
                    out,
                    "<rect class=\"hrtag\" x=\"{:.1}\" y=\"{:.1}\" width=\"{lw:.1}\" height=\"16\" rx=\"8\"/>\
                     <text class=\"hrlabel\" x=\"{lx:.1}\" y=\"{:.1}\">{}</text>",
                    lx - lw / 2.0,
                    ly - 8.0,
                    ly + 3.8,
                    esc(&label)
                );
                if let Some(e) = errors {
                    let text = e.to_string();
                    let bw = (text.len() as f64 * 7.0 + 12.0).max(22.0);
                    let at_badge = (at_label + along(lw, 16.0) / 2.0 + 8.0 + along(bw, 20.0) / 2.0)
                        .max(room * 0.6);
                    let (bx, by) = (x1 + ux * at_badge, y1 + uy * at_badge);
                    let class = if e == 0 { "badge ok" } else { "badge bad" };
                    let _ = writeln!(
                        out,
                        "<g class=\"{class}\"><rect x=\"{:.1}\" y=\"{:.1}\" width=\"{bw:.1}\" height=\"20\" rx=\"10\"/>\
                         <text x=\"{bx:.1}\" y=\"{:.1}\">{text}</text></g>",
                        bx - bw / 2.0,
                        by - 10.0,
                        by + 4.2
                    );
                }
                out.push_str("</g>\n");
            }
            Link::Silent | Link::Member => {
                let class = if e.link == Link::Silent {
                    "silent"
                } else {
                    "member"
                };
                let _ = writeln!(
                    out,
                    "<g class=\"el edge {class}\" data-n=\"{}\"><line x1=\"{x1:.1}\" y1=\"{y1:.1}\" \
                     x2=\"{x2:.1}\" y2=\"{y2:.1}\"/></g>",
                    esc(&n)
                );
            }
        }
    }
    out.push_str("</g>\n<g class=\"nodes\">\n");
    for (ni, m) in map.nodes.iter().enumerate() {
        let (x0, y0) = (m.x - m.w / 2.0, m.y - m.h / 2.0);
        let lit = esc(&join(&lights[ni]));
        match m.kind {
            Kind::San => {
                let san = &d.sans[ni];
                let mut tip = format!(
                    "SAN {}: MTU {}, cost {}, {} HRs, {} other nodes",
                    san.id,
                    san.mtu,
                    san.cost,
                    san.hrs.len(),
                    san.members.len()
                );
                if let Some(mgr) = san.manager {
                    let _ = write!(tip, ", manager {mgr}");
                }
                let _ = writeln!(
                    out,
                    "<g class=\"el node san\" id=\"{key}\" data-k=\"{key}\" data-n=\"{lit}\">\
                     <title>{tip}</title>\
                     <rect x=\"{x0:.1}\" y=\"{y0:.1}\" width=\"{w:.1}\" height=\"{h:.1}\" rx=\"{r:.1}\" filter=\"url(#shadow)\"/>\
                     <text class=\"t1\" x=\"{x:.1}\" y=\"{t1:.1}\">SAN {id}</text>\
                     <text class=\"t2\" x=\"{x:.1}\" y=\"{t2:.1}\">MTU {mtu} · cost {cost}</text></g>",
                    key = esc(&m.key),
                    id = san.id,
                    w = m.w,
                    h = m.h,
                    r = m.h / 2.0,
                    x = m.x,
                    t1 = m.y - 3.0,
                    t2 = m.y + 13.0,
                    mtu = san.mtu,
                    cost = san.cost,
                );
            }
            Kind::Member(si, mi) => {
                let mb = &d.sans[si].members[mi];
                let tip = format!(
                    "{} {:#018x} \"{}\" at {} on SAN {}, level {}",
                    node_type_name(mb.node_type),
                    mb.identity,
                    mb.description,
                    mb.address,
                    d.sans[si].id,
                    level_name(mb.level)
                );
                let class = if mb.described { "host" } else { "host partial" };
                let _ = writeln!(
                    out,
                    "<g class=\"el node {class}\" id=\"{key}\" data-k=\"{key}\" data-n=\"{lit}\">\
                     <title>{tip}</title>\
                     <rect x=\"{x0:.1}\" y=\"{y0:.1}\" width=\"{w:.1}\" height=\"{h:.1}\" rx=\"{r:.1}\"/>\
                     <circle cx=\"{cx:.1}\" cy=\"{y:.1}\" r=\"3.5\"/>\
                     <text x=\"{tx:.1}\" y=\"{ty:.1}\">{label}</text></g>",
                    key = esc(&m.key),
                    tip = esc(&tip),
                    w = m.w,
                    h = m.h,
                    r = m.h / 2.0,
                    cx = x0 + 11.0,
                    y = m.y,
                    tx = m.x + 6.0,
                    ty = m.y + 4.0,
                    label = esc(&member_label(mb)),
                );
            }
            Kind::Router(ri) => {
                let r = &d.routers[ri];
                let class = if r.incomplete() {
                    "router partial"
                } else {
                    "router"
                };
                let tip = format!(
                    "{} {:#018x} \"{}\", read at {}, {} HRs{}",
                    node_type_name(r.node_type),
                    r.identity,
                    r.description,
                    r.address,
                    r.hrs.len(),
                    if r.incomplete() {
                        ", answered in part"
                    } else {
                        ""
                    }
                );
                let _ = writeln!(
                    out,
                    "<g class=\"el node {class}\" id=\"{key}\" data-k=\"{key}\" data-n=\"{lit}\">\
                     <title>{tip}</title>\
                     <rect x=\"{x0:.1}\" y=\"{y0:.1}\" width=\"{w:.1}\" height=\"{h:.1}\" rx=\"7\" filter=\"url(#shadow)\"/>\
                     <rect class=\"bar\" x=\"{x0:.1}\" y=\"{y0:.1}\" width=\"5\" height=\"{h:.1}\" rx=\"2.5\"/>\
                     <text class=\"t1\" x=\"{x:.1}\" y=\"{t1:.1}\">{name}</text>\
                     <text class=\"t2\" x=\"{x:.1}\" y=\"{t2:.1}\">{addr} · {n} HRs</text></g>",
                    key = esc(&m.key),
                    tip = esc(&tip),
                    w = m.w,
                    h = m.h,
                    x = m.x + 2.0,
                    t1 = m.y - 3.0,
                    t2 = m.y + 14.0,
                    name = esc(&cut(&display_name(r), 24)),
                    addr = r.address,
                    n = r.hrs.len(),
                );
            }
            Kind::Silent(ui) => {
                let u = &d.unanswered[ui];
                let why = match u.status {
                    Some(s) => format!("status {s:#06x}"),
                    None => "no answer".into(),
                };
                let _ = writeln!(
                    out,
                    "<g class=\"el node silent\" id=\"{key}\" data-k=\"{key}\" data-n=\"{lit}\">\
                     <title>{addr}: {why} (reached by {reached})</title>\
                     <rect x=\"{x0:.1}\" y=\"{y0:.1}\" width=\"{w:.1}\" height=\"{h:.1}\" rx=\"7\"/>\
                     <text class=\"t1\" x=\"{x:.1}\" y=\"{t1:.1}\">{addr}</text>\
                     <text class=\"t2\" x=\"{x:.1}\" y=\"{t2:.1}\">{why}</text></g>",
                    key = esc(&m.key),
                    addr = u.address,
                    reached = esc(&reached_text(d, u.reached)),
                    w = m.w,
                    h = m.h,
                    x = m.x,
                    t1 = m.y - 3.0,
                    t2 = m.y + 13.0,
                );
            }
        }
    }
    out.push_str("</g>\n</svg>\n");
}

/// How a node was reached, naming the router by its description.
fn reached_text(d: &Discovery, r: Reached) -> String {
    match r {
        Reached::Start => "start".into(),
        Reached::Manager { manager } => format!("records of manager {manager}"),
        Reached::Lrt { by, hr } => match d.routers.iter().find(|x| x.identity == by) {
            Some(x) => format!("LRT of {hr} ({})", display_name(x)),
            None => format!("LRT of {hr} (router {by:#018x})"),
        },
    }
}

const STYLE: &str = r#"
:root{--ink:#0f172a;--muted:#64748b;--line:#e2e8f0;--card:#fff;--bg:#f1f5f9;
--ok:#16a34a;--down:#dc2626;--unk:#d97706;--san:#0369a1;--sanbg:#e0f2fe;}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--ink);background:var(--bg)}
header{background:linear-gradient(135deg,#0f172a,#1e3a5f);color:#fff;padding:22px 32px 26px}
header h1{margin:0 0 4px;font-size:22px;font-weight:650;letter-spacing:.2px}
header .sub{color:#cbd5e1;font-size:13px}
.stats{display:flex;flex-wrap:wrap;gap:10px;margin-top:16px}
.stat{background:rgba(255,255,255,.09);border:1px solid rgba(255,255,255,.14);border-radius:10px;padding:8px 14px;min-width:92px}
.stat b{display:block;font-size:20px;font-weight:650}
.stat span{font-size:11px;text-transform:uppercase;letter-spacing:.6px;color:#cbd5e1}
.stat.warn b{color:#fca5a5}
.status{display:inline-block;margin-left:10px;padding:2px 10px;border-radius:999px;font-size:12px;font-weight:600;vertical-align:3px}
.status.complete{background:#dcfce7;color:#166534}.status.incomplete{background:#fee2e2;color:#991b1b}
main{padding:22px 32px 40px;max-width:1500px;margin:0 auto}
.card{background:var(--card);border-radius:14px;box-shadow:0 1px 3px rgba(15,23,42,.08),0 8px 24px rgba(15,23,42,.05);padding:18px 20px;margin-bottom:22px}
.card h2{margin:0 0 12px;font-size:15px;font-weight:650}
.mapwrap{overflow:auto}
#map{display:block;width:auto;height:auto;max-width:100%;margin:0 auto}
#map text{font-family:inherit;text-anchor:middle}
.node rect{stroke-width:1.5}
.san rect{fill:var(--sanbg);stroke:var(--san)}
.san .t1{font-weight:650;font-size:13px;fill:#075985}.san .t2{font-size:11px;fill:#0c4a6e}
.router rect{fill:#fff;stroke:#334155}.router .bar{fill:#334155;stroke:none}
.router.partial rect{stroke:var(--unk);fill:#fffbeb}.router.partial .bar{fill:var(--unk)}
.router .t1{font-weight:650;font-size:13px;fill:var(--ink)}.router .t2{font-size:11px;fill:var(--muted);font-family:ui-monospace,SFMono-Regular,Menlo,monospace}
.silent rect{fill:#fef2f2;stroke:var(--down);stroke-dasharray:6 4}
.silent .t1{font-weight:650;font-size:12.5px;fill:#991b1b;font-family:ui-monospace,SFMono-Regular,Menlo,monospace}.silent .t2{font-size:11px;fill:#b91c1c}
.edge line{stroke-width:3;stroke-linecap:round}
.edge.active line{stroke:var(--ok)}
.edge.down line{stroke:var(--down);stroke-dasharray:9 6}
.edge.unknown line{stroke:var(--unk);stroke-dasharray:2 5}
.edge.silent line{stroke:var(--down);stroke-width:2;stroke-dasharray:3 5}
.edge.member line{stroke:#a5b4c8;stroke-width:1.5}
.host rect{fill:#f5f3ff;stroke:#7c3aed;stroke-width:1.2}.host circle{fill:#7c3aed}
.host text{font-size:11px;fill:#4c1d95;font-family:ui-monospace,SFMono-Regular,Menlo,monospace}
.host.partial rect{stroke:var(--unk);fill:#fffbeb}
.hrtag{fill:#fff;stroke:var(--line)}
.hrlabel{font-size:10.5px;fill:#334155;font-family:ui-monospace,SFMono-Regular,Menlo,monospace}
.edge.down .hrtag{stroke:var(--down);fill:#fef2f2}.edge.down .hrlabel{fill:#b91c1c}
.edge.unknown .hrtag{stroke:var(--unk);fill:#fffbeb}.edge.unknown .hrlabel{fill:#92400e}
.badge text{font-size:11.5px;font-weight:700;fill:#fff}
.badge.ok rect{fill:#94a3b8}.badge.bad rect{fill:var(--down)}
.node{cursor:pointer}
.el{transition:opacity .15s}
#map.focus .el:not(.on){opacity:.15}
#map.focus .node.on rect{stroke-width:2.5}
.legend{display:flex;flex-wrap:wrap;gap:8px 22px;margin-top:12px;padding-top:12px;border-top:1px solid var(--line);font-size:12.5px;color:#334155}
.legend span{display:inline-flex;align-items:center;gap:7px}
.legend svg{flex:none}
table{border-collapse:collapse;width:100%;font-size:13px}
th{text-align:left;font-size:11px;text-transform:uppercase;letter-spacing:.5px;color:var(--muted);font-weight:600;padding:6px 10px;border-bottom:2px solid var(--line)}
td{padding:6px 10px;border-bottom:1px solid var(--line);vertical-align:top}
td.mono,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12.5px}
td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.on td{background:#eff6ff}
tbody tr:hover td{background:#f8fafc}
.pill{display:inline-block;padding:1px 9px;border-radius:999px;font-size:12px;font-weight:600}
.pill.active,.pill.complete{background:#dcfce7;color:#166534}
.pill.down,.pill.silent{background:#fee2e2;color:#991b1b}
.pill.unknown,.pill.partial{background:#fef3c7;color:#92400e}
.err{color:#b91c1c;font-weight:700}
.none{color:var(--muted)}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(420px,1fr));gap:22px}
.grid .card{margin-bottom:0}
footer{color:var(--muted);font-size:12px;text-align:center;padding:0 0 24px}
"#;

const SCRIPT: &str = r#"
(function(){
  var map=document.getElementById('map');
  var lit=[];
  function light(k){
    lit.forEach(function(e){e.classList.remove('on');});
    lit=[];
    if(!k){map.classList.remove('focus');return;}
    document.querySelectorAll('[data-n]').forEach(function(e){
      if(e.getAttribute('data-n').split(' ').indexOf(k)>=0){e.classList.add('on');lit.push(e);}
    });
    map.classList.add('focus');
  }
  document.querySelectorAll('[data-k]').forEach(function(e){
    var k=e.getAttribute('data-k');
    e.addEventListener('mouseenter',function(){light(k);});
    e.addEventListener('mouseleave',function(){light(null);});
    if(e.closest('svg')){e.addEventListener('click',function(){
      var row=document.getElementById('row-'+k);
      if(row){row.scrollIntoView({behavior:'smooth',block:'center'});}
    });}
  });
})();
"#;

const LEGEND: &str = r##"<div class="legend">
<span><svg width="34" height="20"><rect x="1" y="2" width="32" height="16" rx="4" fill="#fff" stroke="#334155" stroke-width="1.5"/><rect x="1" y="2" width="4" height="16" rx="2" fill="#334155"/></svg>router (description, address read at)</span>
<span><svg width="34" height="20"><rect x="1" y="2" width="32" height="16" rx="4" fill="#fffbeb" stroke="#d97706" stroke-width="1.5"/></svg>router that answered in part</span>
<span><svg width="34" height="20"><rect x="1" y="2" width="32" height="16" rx="8" fill="#e0f2fe" stroke="#0369a1" stroke-width="1.5"/></svg>SAN (id, MTU, cost)</span>
<span><svg width="34" height="20"><line x1="0" y1="10" x2="6" y2="10" stroke="#a5b4c8" stroke-width="1.5"/><rect x="6" y="3" width="27" height="14" rx="7" fill="#f5f3ff" stroke="#7c3aed" stroke-width="1.2"/><circle cx="12" cy="10" r="2.5" fill="#7c3aed"/></svg>node on a SAN (host: description, address)</span>
<span><svg width="34" height="20"><rect x="1" y="2" width="32" height="16" rx="4" fill="#fef2f2" stroke="#dc2626" stroke-width="1.5" stroke-dasharray="5 3"/></svg>did not answer</span>
<span><svg width="34" height="20"><line x1="2" y1="10" x2="32" y2="10" stroke="#16a34a" stroke-width="3" stroke-linecap="round"/></svg>HR active</span>
<span><svg width="34" height="20"><line x1="2" y1="10" x2="32" y2="10" stroke="#dc2626" stroke-width="3" stroke-dasharray="7 5"/></svg>HR down</span>
<span><svg width="34" height="20"><line x1="2" y1="10" x2="32" y2="10" stroke="#d97706" stroke-width="3" stroke-linecap="round" stroke-dasharray="2 5"/></svg>HR in another state</span>
<span><svg width="34" height="20"><rect x="5" y="1" width="24" height="18" rx="9" fill="#94a3b8"/><text x="17" y="14" font-size="11" font-weight="700" fill="#fff" text-anchor="middle">0</text></svg><svg width="34" height="20"><rect x="5" y="1" width="24" height="18" rx="9" fill="#dc2626"/><text x="17" y="14" font-size="11" font-weight="700" fill="#fff" text-anchor="middle">7</text></svg>the port's errors and drops (PortCounters)</span>
</div>
"##;

/// The page for `d`, walked from `start` at `when` (text, as
/// [`utc_now`] gives it).
pub fn render_html(d: &Discovery, when: &str, start: Address) -> String {
    let map = layout(d);
    let complete = d.complete();
    let errors: Option<u64> = d
        .routers
        .iter()
        .flat_map(|r| r.hrs.iter().filter_map(|h| h.errors()))
        .reduce(u64::saturating_add);
    let names: BTreeMap<Address, String> = d
        .routers
        .iter()
        .flat_map(|r| {
            r.hrs
                .iter()
                .filter_map(|h| h.info.as_ref())
                .map(move |i| (i.address, display_name(r)))
        })
        .collect();
    let mut out = String::with_capacity(32 * 1024);
    out.push_str(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
    );
    let _ = writeln!(
        out,
        "<title>MessageWay network: {} routers, {} SANs</title>",
        d.routers.len(),
        d.sans.len()
    );
    let _ = writeln!(out, "<style>{STYLE}</style>\n</head>\n<body>");
    // The summary.
    let (status, status_text) = if complete {
        ("complete", "every node answered")
    } else {
        ("incomplete", "incomplete: some nodes did not answer")
    };
    let _ = writeln!(
        out,
        "<header><h1>MessageWay network<span class=\"status {status}\" id=\"status\">{status_text}</span></h1>\
         <div class=\"sub\">walked from {start} by mwctl discover at {} in {} ms</div>\n<div class=\"stats\">",
        esc(when),
        d.elapsed.as_millis()
    );
    let stat = |out: &mut String, n: String, what: &str, warn: bool| {
        let _ = writeln!(
            out,
            "<div class=\"stat{}\"><b>{n}</b><span>{what}</span></div>",
            if warn { " warn" } else { "" }
        );
    };
    stat(&mut out, d.routers.len().to_string(), "routers", false);
    stat(&mut out, d.sans.len().to_string(), "SANs", false);
    stat(&mut out, d.hr_count().to_string(), "HRs", false);
    stat(&mut out, d.member_count().to_string(), "nodes", false);
    let down = d
        .routers
        .iter()
        .flat_map(|r| r.hrs.iter().filter_map(|h| h.info.as_ref()))
        .filter(|i| state_name(i.state) != "active")
        .count();
    stat(&mut out, down.to_string(), "HRs not active", down > 0);
    stat(
        &mut out,
        d.unanswered.len().to_string(),
        "did not answer",
        !d.unanswered.is_empty(),
    );
    stat(
        &mut out,
        errors.map_or("–".into(), |e| e.to_string()),
        "port errors",
        errors.unwrap_or(0) > 0,
    );
    out.push_str(
        "</div></header>\n<main>\n<section class=\"card\"><h2>Map</h2><div class=\"mapwrap\">\n",
    );
    render_map(d, &map, &mut out);
    out.push_str("</div>\n");
    out.push_str(LEGEND);
    out.push_str("</section>\n");

    // Routers.
    out.push_str(
        "<section class=\"card\"><h2>Routers</h2><table id=\"routers\"><thead><tr><th>Description</th>\
         <th>Identity</th><th>Type</th><th>Read at</th><th class=\"num\">HRs</th><th>Reached by</th>\
         <th>Partitions</th><th>Answered</th></tr></thead><tbody>\n",
    );
    for r in &d.routers {
        let key = router_key(r);
        let (pill, what) = if r.incomplete() {
            ("partial", "in part")
        } else {
            ("complete", "all")
        };
        let _ = writeln!(
            out,
            "<tr id=\"row-{key}\" data-k=\"{key}\" data-n=\"{key}\"><td>{}</td><td class=\"mono\">{:#018x}</td>\
             <td>{}</td><td class=\"mono\">{}</td><td class=\"num\">{}</td><td>{}</td>\
             <td class=\"mono\">{}</td><td><span class=\"pill {pill}\">{what}</span></td></tr>",
            if r.description.is_empty() {
                "<span class=\"none\">(none)</span>".to_string()
            } else {
                esc(&r.description)
            },
            r.identity,
            node_type_name(r.node_type),
            r.address,
            r.hrs.len(),
            esc(&reached_text(d, r.reached)),
            esc(&crate::discover_partitions::text(r.partitions.as_deref())),
        );
    }
    out.push_str("</tbody></table></section>\n");

    // HRs.
    out.push_str(
        "<section class=\"card\"><h2>HRs</h2><table id=\"hrs\"><thead><tr><th>Router</th><th class=\"num\">Port</th>\
         <th>Address</th><th>SAN</th><th>State</th><th class=\"num\">MTU</th><th class=\"num\">Cost</th>\
         <th class=\"num\">Errors</th><th>Routers across</th></tr></thead><tbody>\n",
    );
    for r in &d.routers {
        let key = router_key(r);
        for h in &r.hrs {
            let errors = match h.errors() {
                Some(0) => "0".to_string(),
                Some(e) => format!("<span class=\"err\">{e}</span>"),
                None => "<span class=\"none\">–</span>".into(),
            };
            let across = match &h.across {
                None => "<span class=\"none\">LRT not answered</span>".to_string(),
                Some(a) if a.is_empty() => "<span class=\"none\">none</span>".into(),
                Some(a) => a
                    .iter()
                    .map(|x| match names.get(x) {
                        Some(n) => format!("<span class=\"mono\">{x}</span> {}", esc(n)),
                        None => format!("<span class=\"mono\">{x}</span>"),
                    })
                    .collect::<Vec<_>>()
                    .join(", "),
            };
            match &h.info {
                Some(i) => {
                    let state = state_name(i.state);
                    let n = format!("{key} {}", san_key(i.san));
                    let _ = writeln!(
                        out,
                        "<tr data-k=\"{key}\" data-n=\"{n}\"><td>{}</td><td class=\"num\">{}</td>\
                         <td class=\"mono\">{}</td><td class=\"mono\">{}</td>\
                         <td><span class=\"pill {state}\">{state}</span></td><td class=\"num\">{}</td>\
                         <td class=\"num\">{}</td><td class=\"num\">{errors}</td><td>{across}</td></tr>",
                        esc(&display_name(r)),
                        h.port,
                        i.address,
                        i.san,
                        i.mtu,
                        i.cost,
                    );
                }
                None => {
                    let _ = writeln!(
                        out,
                        "<tr data-k=\"{key}\" data-n=\"{key}\"><td>{}</td><td class=\"num\">{}</td>\
                         <td colspan=\"5\"><span class=\"pill unknown\">PortInfo not answered</span></td>\
                         <td class=\"num\">{errors}</td><td>{across}</td></tr>",
                        esc(&display_name(r)),
                        h.port,
                    );
                }
            }
        }
    }
    out.push_str("</tbody></table></section>\n");

    // The SANs' other nodes.
    out.push_str(
        "<section class=\"card\"><h2>Nodes on the SANs</h2><table id=\"nodes\"><thead><tr><th>Description</th>\
         <th>Address</th><th>SAN</th><th>Type</th><th>Level</th><th>Identity</th><th>Partitions</th><th>From</th></tr></thead><tbody>\n",
    );
    if d.member_count() == 0 {
        out.push_str("<tr><td colspan=\"8\" class=\"none\">none found</td></tr>\n");
    }
    for san in &d.sans {
        for mb in &san.members {
            let key = member_key(mb);
            let from = match mb.source {
                MemberSource::Manager(m) => {
                    format!("records of manager <span class=\"mono\">{m}</span>")
                }
                MemberSource::Lrt { hr, .. } => format!("LRT of <span class=\"mono\">{hr}</span>"),
            };
            let _ = writeln!(
                out,
                "<tr id=\"row-{key}\" data-k=\"{key}\" data-n=\"{key}\"><td>{}</td><td class=\"mono\">{}</td>\
                 <td class=\"mono\">{}</td><td>{}</td><td>{}</td><td class=\"mono\">{:#018x}</td>\
                 <td class=\"mono\">{}</td><td>{from}</td></tr>",
                if mb.described {
                    esc(&mb.description)
                } else {
                    "<span class=\"none\">(not answered)</span>".to_string()
                },
                mb.address,
                san.id,
                node_type_name(mb.node_type),
                level_name(mb.level),
                mb.identity,
                esc(&crate::discover_partitions::text(mb.partitions.as_deref())),
            );
        }
    }
    out.push_str("</tbody></table></section>\n<div class=\"grid\">\n");

    // SANs.
    out.push_str(
        "<section class=\"card\"><h2>SANs</h2><table id=\"sans\"><thead><tr><th>SAN</th><th class=\"num\">MTU</th>\
         <th class=\"num\">Cost</th><th>Manager</th><th>HRs on it</th><th class=\"num\">Nodes</th></tr></thead><tbody>\n",
    );
    for san in &d.sans {
        let key = san_key(san.id);
        let on = san
            .hrs
            .iter()
            .map(|(a, _)| match names.get(a) {
                Some(n) => format!("<span class=\"mono\">{a}</span> {}", esc(n)),
                None => format!("<span class=\"mono\">{a}</span>"),
            })
            .collect::<Vec<_>>()
            .join(", ");
        let manager = san.manager.map_or_else(
            || "<span class=\"none\">–</span>".to_string(),
            |m| format!("<span class=\"mono\">{m}</span>"),
        );
        let _ = writeln!(
            out,
            "<tr id=\"row-{key}\" data-k=\"{key}\" data-n=\"{key}\"><td class=\"mono\">{}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td><td>{manager}</td><td>{on}</td>\
             <td class=\"num\">{}</td></tr>",
            san.id,
            san.mtu,
            san.cost,
            san.members.len(),
        );
    }
    out.push_str("</tbody></table></section>\n");

    // The nodes that did not answer.
    out.push_str(
        "<section class=\"card\"><h2>Did not answer</h2><table id=\"unanswered\"><thead><tr><th>Address</th>\
         <th>Reached by</th><th>Why</th></tr></thead><tbody>\n",
    );
    if d.unanswered.is_empty() {
        out.push_str("<tr><td colspan=\"3\" class=\"none\">every node answered</td></tr>\n");
    }
    for u in &d.unanswered {
        let key = format!("u-{}", u.address);
        let why = match u.status {
            Some(s) => format!("status {s:#06x}"),
            None => "no answer".into(),
        };
        let _ = writeln!(
            out,
            "<tr id=\"row-{key}\" data-k=\"{key}\" data-n=\"{key}\"><td class=\"mono\">{}</td><td>{}</td>\
             <td><span class=\"pill silent\">{why}</span></td></tr>",
            u.address,
            esc(&reached_text(d, u.reached)),
        );
    }
    out.push_str("</tbody></table></section>\n</div>\n</main>\n");
    let _ = writeln!(
        out,
        "<footer>{} · hover a node or a row to light its neighbours; click a node for its row</footer>",
        esc(&d.summary())
    );
    let _ = writeln!(out, "<script>{SCRIPT}</script>\n</body>\n</html>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discover::{Hr, HrInfo, Unanswered};
    use mgmt::attr::{PortCounters, PortInfo};
    use std::time::Duration;

    fn hr(port: u8, address: u16, san: u16, state: u8, errors: Option<u64>) -> Hr {
        Hr {
            port,
            info: Some(HrInfo {
                address: Address(address),
                san: Address(san),
                state,
                mtu: 1500,
                cost: 1,
                manager: Address(0),
                buddies: 0,
            }),
            across: Some(vec![]),
            nodes: vec![],
            counters: errors.map(|e| {
                let mut c = vec![0; PortCounters::COUNT];
                c[0] = 1000;
                c[1] = e;
                PortCounters {
                    port_select: port,
                    counters: c,
                }
            }),
        }
    }

    fn router(identity: u64, name: &str, hrs: Vec<Hr>) -> Router {
        Router {
            partitions: None,
            identity,
            node_type: 3,
            level: 3,
            description: name.into(),
            described: true,
            address: hrs[0].info.as_ref().unwrap().address,
            reached: Reached::Start,
            hrs,
        }
    }

    /// `d` with its SANs gathered from its routers, and host `h0` on the
    /// first.
    fn with_sans(mut d: Discovery) -> Discovery {
        d.sans = crate::discover_sans::sans_of_routers(&d);
        if let Some(s) = d.sans.first_mut() {
            s.members.push(Member {
                partitions: None,
                address: Address(0x0100),
                identity: 0x100,
                node_type: 1,
                level: 2,
                description: "h0 <host>".into(),
                described: true,
                source: MemberSource::Manager(Address(0x0100)),
            });
        }
        d
    }

    fn two() -> Discovery {
        with_sans(Discovery {
            routers: vec![
                router(
                    1,
                    "ab <b>\"edge\"</b> & 'co'",
                    vec![
                        hr(0, 0x0119, 0x0100, PortInfo::ACTIVE, Some(0)),
                        hr(1, 0x0219, 0x0200, PortInfo::DOWN, Some(7)),
                    ],
                ),
                Router {
                    reached: Reached::Lrt {
                        by: 1,
                        hr: Address(0x0219),
                    },
                    ..router(2, "bc", vec![hr(0, 0x0221, 0x0200, PortInfo::ACTIVE, None)])
                },
            ],
            unanswered: vec![Unanswered {
                address: Address(0x0231),
                reached: Reached::Lrt {
                    by: 2,
                    hr: Address(0x0221),
                },
                status: None,
            }],
            elapsed: Duration::from_millis(3),
            ..Discovery::default()
        })
    }

    #[test]
    fn strings_from_the_network_are_escaped() {
        assert_eq!(
            esc("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
        let page = render_html(&two(), "<now>", Address(0x0119));
        assert!(!page.contains("<b>\"edge"), "{page}");
        assert!(page.contains("ab &lt;b&gt;&quot;edge&quot;&lt;/b&gt; &amp; &#39;co&#39;"));
        assert!(page.contains("&lt;now&gt;"));
        // A description that would close the script or the SVG is text.
        let mut d = two();
        d.routers[1].description = "</script><script>alert(1)</script>".into();
        let page = render_html(&d, "now", Address(0x0119));
        assert_eq!(page.matches("<script>").count(), 1, "{page}");
    }

    #[test]
    fn the_tables_give_each_nodes_partitions() {
        use mgmt::partition::{Membership, PartitionKey};
        let mut d = two();
        d.sans[0].members[0].partitions = Some(vec![
            (PartitionKey::new(0x10).unwrap(), Membership::Full),
            (PartitionKey::new(0x7fff).unwrap(), Membership::Limited),
        ]);
        let page = render_html(&d, "now", Address(0x0119));
        assert!(
            page.contains("<td class=\"mono\">0x0010 0x7fff(limited)</td>"),
            "{page}"
        );
        // The routers' are unknown here.
        assert_eq!(
            page.matches("<td class=\"mono\">-</td>").count(),
            2,
            "{page}"
        );
    }

    #[test]
    fn every_router_san_and_silent_node_is_drawn_and_listed() {
        let d = two();
        let page = render_html(&d, "2026-11-27 21:00:00 UTC", Address(0x0119));
        assert!(page.starts_with("<!DOCTYPE html>"));
        assert!(page.trim_end().ends_with("</html>"));
        for id in [
            "id=\"r-0x0000000000000001\"",
            "id=\"r-0x0000000000000002\"",
            "id=\"san-0x0100\"",
            "id=\"san-0x0200\"",
            "id=\"u-0x0231\"",
            "id=\"row-r-0x0000000000000002\"",
            "id=\"row-san-0x0200\"",
            "id=\"row-u-0x0231\"",
        ] {
            assert_eq!(page.matches(id).count(), 1, "{id}");
        }
        // The host, on its SAN, escaped, and in the nodes' table.
        assert!(page.contains("class=\"el node host\" id=\"h-0x0100\""));
        assert!(page.contains("class=\"el edge member\" data-n=\"san-0x0100 h-0x0100\""));
        assert!(page.contains("id=\"row-h-0x0100\""));
        assert!(page.contains("h0 &lt;host&gt;"));
        // The silent node is dashed red, and on the SAN whose LRT named it.
        assert!(page.contains("class=\"el node silent\" id=\"u-0x0231\""));
        assert!(page.contains("class=\"el edge silent\" data-n=\"san-0x0200 u-0x0231\""));
        assert!(page.contains("<span class=\"status incomplete\""));
        // HRs by state, errors as badges where read.
        assert_eq!(page.matches("class=\"el edge active\"").count(), 2);
        assert_eq!(page.matches("class=\"el edge down\"").count(), 1);
        assert!(page.contains("<g class=\"badge bad\">"));
        assert!(page.contains(">7</text></g>"));
        assert_eq!(page.matches("<g class=\"badge ").count(), 2);
        assert!(page.contains("<td class=\"num\"><span class=\"err\">7</span></td>"));
        assert!(page.contains("MTU 1500 · cost 1"));
        // Nothing fetched: no external reference.
        assert!(!page.contains("src="));
        assert!(!page.contains("href="));
        assert!(!page.contains("@import"));
        // Complete when every node answered.
        let mut ok = two();
        ok.unanswered.clear();
        let page = render_html(&ok, "now", Address(0x0119));
        assert!(page.contains("<span class=\"status complete\""));
        assert!(page.contains("every node answered"));
    }

    #[test]
    fn the_layout_is_deterministic_and_nothing_overlaps() {
        let d = two();
        let m = layout(&d);
        assert_eq!(m, layout(&d));
        assert_eq!(m.nodes.len(), 6);
        assert_eq!(m.edges.len(), 5);
        apart(&m);
        assert_eq!(
            render_html(&d, "t", Address(1)),
            render_html(&d, "t", Address(1))
        );
    }

    /// No two boxes of `m` overlap, and each is inside the drawing.
    fn apart(m: &Map) {
        for (i, a) in m.nodes.iter().enumerate() {
            assert!(
                a.x - a.w / 2.0 >= 0.0 && a.x + a.w / 2.0 <= m.width,
                "{a:?}"
            );
            assert!(
                a.y - a.h / 2.0 >= 0.0 && a.y + a.h / 2.0 <= m.height,
                "{a:?}"
            );
            for b in &m.nodes[i + 1..] {
                let apart = (a.x - b.x).abs() >= (a.w + b.w) / 2.0
                    || (a.y - b.y).abs() >= (a.h + b.h) / 2.0;
                assert!(apart, "{a:?} overlaps {b:?}");
            }
        }
    }

    #[test]
    fn a_ring_of_sans_is_drawn_without_crossings() {
        // Six SANs in a ring, a router between each two, and one router
        // hanging off each SAN.
        let mut routers = Vec::new();
        for i in 0..6u16 {
            let (s, t) = (0x0600 + i, 0x0600 + (i + 1) % 6);
            routers.push(router(
                u64::from(i) + 1,
                &format!("ring{i}"),
                vec![
                    hr(0, 0x0100 + 2 * i, s, PortInfo::ACTIVE, Some(0)),
                    hr(1, 0x0101 + 2 * i, t, PortInfo::ACTIVE, Some(0)),
                ],
            ));
            routers.push(router(
                u64::from(i) + 0x10,
                &format!("leaf{i}"),
                vec![hr(0, 0x0200 + i, s, PortInfo::ACTIVE, None)],
            ));
        }
        let d = with_sans(Discovery {
            routers,
            ..Discovery::default()
        });
        let m = layout(&d);
        assert_eq!(m.nodes.len(), 19);
        assert_eq!(crossings(&m.nodes, &m.edges), 0, "{m:?}");
        apart(&m);
        // Every HR's edge leaves room for its label and badge.
        for e in &m.edges {
            let (a, b) = (&m.nodes[e.from], &m.nodes[e.to]);
            let (x1, y1) = border(a, b.x, b.y);
            let (x2, y2) = border(b, a.x, a.y);
            assert!((x2 - x1).hypot(y2 - y1) >= e.least() - 1.0, "{a:?} {b:?}");
        }
    }

    #[test]
    fn an_empty_walk_is_a_page_too() {
        let d = Discovery {
            unanswered: vec![Unanswered {
                address: Address(0x0111),
                reached: Reached::Start,
                status: Some(0x000c),
            }],
            ..Discovery::default()
        };
        let page = render_html(&d, "t", Address(0x0111));
        assert!(page.contains("id=\"u-0x0111\""));
        assert!(page.contains("status 0x000c"));
    }

    #[test]
    fn utc_text_is_the_civil_date() {
        assert_eq!(utc_text(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc_text(951_782_400), "2000-02-29 00:00:00 UTC");
        assert_eq!(utc_text(1_795_813_261), "2026-11-27 21:01:01 UTC");
    }
}
