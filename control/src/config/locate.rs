//! Where a key path (`hr[1].port.bind`) is in the TOML text, so that every
//! configuration error can say its line.

use toml_edit::{ImDocument, Item};

use super::ConfigError;

/// 1-based line and column of byte offset `at` in `text`.
pub(super) fn line_col(text: &str, at: usize) -> (usize, usize) {
    let at = at.min(text.len());
    let before = text.get(..at).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let col = before
        .rsplit_once('\n')
        .map_or(before, |(_, l)| l)
        .chars()
        .count()
        + 1;
    (line, col)
}

/// Adds the location of each error's key, where the text has it (else the
/// location of the nearest enclosing table).
pub(super) fn locate_all(text: &str, mut errs: Vec<ConfigError>) -> Vec<ConfigError> {
    let Ok(doc) = ImDocument::parse(text) else {
        return errs;
    };
    for e in &mut errs {
        if e.location.is_none() {
            e.location = span_of(doc.as_item(), &e.key).map(|at| line_col(text, at));
        }
    }
    errs
}

/// The start of the deepest item on `path` that has a span.
fn span_of(root: &Item, path: &str) -> Option<usize> {
    let mut item = root;
    let mut best = None;
    for seg in path.split('.') {
        let (name, indices) = match seg.find('[') {
            Some(p) => (&seg[..p], &seg[p..]),
            None => (seg, ""),
        };
        if !name.is_empty() {
            match item.get(name) {
                Some(i) => item = i,
                None => return best,
            }
            best = item.span().map(|s| s.start).or(best);
        }
        for idx in indices.split('[').filter(|s| !s.is_empty()) {
            let Some(n) = idx.strip_suffix(']').and_then(|n| n.parse::<usize>().ok()) else {
                return best;
            };
            match item.get(n) {
                Some(i) => item = i,
                None => return best,
            }
            best = item.span().map(|s| s.start).or(best);
        }
    }
    best
}
