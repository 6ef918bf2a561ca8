//! A small table printer for mwctl's human output: a table of columns
//! (right-aligned where they hold numbers), and any JSON answer as tables
//! and `key  value` lines. What each command shows is in render.rs.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use serde_json::{Map, Value};

/// A table: headers, rows of cells, right-aligned columns.
#[derive(Debug, Default)]
pub struct Table {
    /// Column titles.
    pub headers: Vec<String>,
    /// Cells.
    pub rows: Vec<Vec<String>>,
    /// Columns aligned to the right (numbers).
    pub right: Vec<bool>,
}

impl Table {
    /// A table with these columns.
    pub fn new(headers: &[&str]) -> Table {
        Table {
            headers: headers.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
            right: vec![false; headers.len()],
        }
    }

    /// Adds a row.
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// The table as text, columns two spaces apart, no trailing blanks.
    pub fn render(&self) -> String {
        let n = self.headers.len();
        let mut w: Vec<usize> = self.headers.iter().map(|h| h.chars().count()).collect();
        for r in &self.rows {
            for (i, c) in r.iter().enumerate().take(n) {
                w[i] = w[i].max(c.chars().count());
            }
        }
        let mut out = String::new();
        let mut line = |cells: &[String]| {
            let mut l = String::new();
            for (i, width) in w.iter().enumerate() {
                let c = cells.get(i).map(String::as_str).unwrap_or("");
                let pad = width - c.chars().count();
                if i > 0 {
                    l.push_str("  ");
                }
                if self.right.get(i).copied().unwrap_or(false) {
                    l.extend(std::iter::repeat_n(' ', pad));
                    l.push_str(c);
                } else {
                    l.push_str(c);
                    l.extend(std::iter::repeat_n(' ', pad));
                }
            }
            out.push_str(l.trim_end());
            out.push('\n');
        };
        line(&self.headers);
        for r in &self.rows {
            line(r);
        }
        out
    }
}

/// A JSON value as a cell: `-` for null and empty, `yes`/`no`, arrays of
/// scalars joined with spaces.
pub fn cell(v: &Value) -> String {
    match v {
        Value::Null => "-".into(),
        Value::Bool(b) => if *b { "yes" } else { "no" }.into(),
        Value::Number(n) => n.to_string(),
        Value::String(s) if s.is_empty() => "-".into(),
        Value::String(s) => s.clone(),
        Value::Array(a) if a.is_empty() => "-".into(),
        Value::Array(a) if a.iter().all(|x| !x.is_object() && !x.is_array()) => {
            a.iter().map(cell).collect::<Vec<_>>().join(" ")
        }
        Value::Object(m) if m.values().all(|x| x.is_number()) => m
            .iter()
            .filter(|(_, x)| x.as_u64() != Some(0))
            .map(|(k, x)| format!("{k}={x}"))
            .collect::<Vec<_>>()
            .join(" "),
        other => other.to_string(),
    }
}

/// A table of JSON objects: the columns of `order` first (those present),
/// then any other key, sorted.
pub fn objects_table(rows: &[Value], order: &[&str]) -> Table {
    let mut keys: BTreeSet<&str> = BTreeSet::new();
    for r in rows {
        if let Some(m) = r.as_object() {
            keys.extend(m.keys().map(String::as_str));
        }
    }
    let mut cols: Vec<&str> = order.iter().copied().filter(|k| keys.contains(k)).collect();
    cols.extend(keys.iter().copied().filter(|k| !order.contains(k)));
    let mut t = Table::new(&cols);
    for (i, c) in cols.iter().enumerate() {
        t.right[i] = rows.iter().any(|r| r[c].is_number())
            && rows.iter().all(|r| r[c].is_number() || r[c].is_null());
    }
    for r in rows {
        t.row(cols.iter().map(|c| cell(&r[c])).collect());
    }
    t
}

/// Objects as a table of the columns `cols` only, in that order: the tables
/// an operator reads often, kept within 80 columns (`--json` has every
/// field, under the same names).
pub fn objects_table_only(rows: &[Value], cols: &[&str]) -> Table {
    let mut t = Table::new(cols);
    for (i, c) in cols.iter().enumerate() {
        t.right[i] = rows.iter().any(|r| r[c].is_number())
            && rows.iter().all(|r| r[c].is_number() || r[c].is_null());
    }
    for r in rows {
        t.row(cols.iter().map(|c| cell(&r[c])).collect());
    }
    t
}

/// An object as `key  value` lines (keys of `order` first); arrays of
/// objects become tables after the scalars.
pub fn key_values(m: &Map<String, Value>, order: &[&str]) -> String {
    let mut keys: Vec<&str> = order
        .iter()
        .copied()
        .filter(|k| m.contains_key(*k))
        .collect();
    keys.extend(m.keys().map(String::as_str).filter(|k| !order.contains(k)));
    let width = keys.iter().map(|k| k.len()).max().unwrap_or(0);
    let mut out = String::new();
    let mut tables = String::new();
    for k in keys {
        let v = &m[k];
        match v {
            Value::Array(a) if !a.is_empty() && a.iter().all(Value::is_object) => {
                let _ = write!(tables, "\n{k}:\n{}", objects_table(a, &[]).render());
            }
            _ => {
                let _ = writeln!(out, "{k:width$}  {}", cell(v));
            }
        }
    }
    out + &tables
}

/// Any answer, as well as it can.
pub fn generic(v: &Value, order: &[&str]) -> String {
    match v {
        Value::Array(a) if a.is_empty() => "(none)\n".into(),
        Value::Array(a) if a.iter().all(Value::is_object) => objects_table(a, order).render(),
        Value::Object(m) => key_values(m, order),
        Value::String(s) => format!("{s}\n"),
        Value::Null => String::new(),
        other => format!("{}\n", cell(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tables_align() {
        let rows = vec![
            json!({"port": 0, "name": "h1", "up": true, "list": ["0x0101", "0x0102"]}),
            json!({"port": 10, "name": "", "up": false, "list": [], "extra": null}),
        ];
        let t = objects_table(&rows, &["port", "name"]).render();
        assert_eq!(
            t,
            "port  name  extra  list           up\n   0  h1    -      0x0101 0x0102  yes\n  10  -     -      -              no\n"
        );
    }

    #[test]
    fn generic_objects() {
        let v = json!({"name": "ab", "hrs": 2, "rows": [{"a": 1}]});
        let s = generic(&v, &["name"]);
        assert!(s.starts_with("name  ab\nhrs   2\n"), "{s}");
        assert!(s.contains("\nrows:\na\n1\n"), "{s}");
        assert_eq!(generic(&json!([]), &[]), "(none)\n");
    }
}
