//! Hex text in and out.
//!
//! Input ([`parse`]) is forgiving in the ways hand-written test vectors are:
//! whitespace anywhere, an optional `0x`/`0X` prefix on each
//! whitespace-separated token, and `#` comments to the end of the line. The
//! digits of all tokens are catenated, so `01 02`, `0102` and `0x01 0x02` are
//! the same two bytes; the total number of digits must be even.

use core::fmt;

/// Why hex text could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HexError {
    /// A character that is not a hex digit, whitespace or part of a comment.
    BadChar {
        /// The offending character.
        ch: char,
        /// 1-based line number.
        line: usize,
        /// 1-based column (in characters).
        column: usize,
    },
    /// An odd number of hex digits in total.
    OddDigits(usize),
}

impl fmt::Display for HexError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HexError::BadChar { ch, line, column } => {
                write!(
                    f,
                    "invalid hex character {ch:?} at line {line}, column {column}"
                )
            }
            HexError::OddDigits(n) => write!(f, "odd number of hex digits ({n})"),
        }
    }
}

impl std::error::Error for HexError {}

/// Reads hex text into bytes.
pub fn parse(text: &str) -> Result<Vec<u8>, HexError> {
    let mut digits: Vec<u8> = Vec::with_capacity(text.len() / 2);
    for (li, line) in text.lines().enumerate() {
        let line_no = li + 1;
        let code = line.split('#').next().unwrap_or("");
        let chars: Vec<char> = code.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            if chars[i].is_whitespace() {
                i += 1;
                continue;
            }
            // Start of a token: an optional 0x prefix.
            if chars[i] == '0' && matches!(chars.get(i + 1), Some('x' | 'X')) {
                i += 2;
            }
            while i < chars.len() && !chars[i].is_whitespace() {
                let ch = chars[i];
                match ch.to_digit(16) {
                    Some(d) => digits.push(d as u8),
                    None => {
                        return Err(HexError::BadChar {
                            ch,
                            line: line_no,
                            column: i + 1,
                        });
                    }
                }
                i += 1;
            }
        }
    }
    if !digits.len().is_multiple_of(2) {
        return Err(HexError::OddDigits(digits.len()));
    }
    Ok(digits.chunks_exact(2).map(|p| (p[0] << 4) | p[1]).collect())
}

/// Lowercase hex without separators, e.g. `"0115"`.
pub fn encode(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// Lowercase hex with a space between bytes, e.g. `"01 15"`.
pub fn spaced(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 3);
    for (i, b) in bytes.iter().enumerate() {
        if i > 0 {
            s.push(' ');
        }
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// Bytes joined by colons, e.g. a MAC address `"02:00:00:00:00:07"`.
pub fn colons(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 3);
    for (i, b) in bytes.iter().enumerate() {
        if i > 0 {
            s.push(':');
        }
        s.push_str(&format!("{b:02x}"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_of_input() {
        assert_eq!(parse("01 02").unwrap(), [1, 2]);
        assert_eq!(parse("0102").unwrap(), [1, 2]);
        assert_eq!(parse("0x01 0X02").unwrap(), [1, 2]);
        assert_eq!(
            parse("0x0102 # comment ff\n  03\t04 #\n").unwrap(),
            [1, 2, 3, 4]
        );
        assert_eq!(parse("AbcD").unwrap(), [0xAB, 0xCD]);
        assert_eq!(parse("").unwrap(), Vec::<u8>::new());
        assert_eq!(parse("# only a comment").unwrap(), Vec::<u8>::new());
        // A token that is just "0x" contributes nothing.
        assert_eq!(parse("0x 01").unwrap(), [1]);
    }

    #[test]
    fn errors() {
        assert_eq!(
            parse("01 0g").unwrap_err(),
            HexError::BadChar {
                ch: 'g',
                line: 1,
                column: 5
            }
        );
        assert_eq!(
            parse("01\n x1").unwrap_err(),
            HexError::BadChar {
                ch: 'x',
                line: 2,
                column: 2
            }
        );
        assert_eq!(parse("012").unwrap_err(), HexError::OddDigits(3));
        assert!(parse("01 02 €").is_err());
    }

    #[test]
    fn output() {
        assert_eq!(encode(&[1, 0xab]), "01ab");
        assert_eq!(spaced(&[1, 0xab]), "01 ab");
        assert_eq!(colons(&[2, 0, 7]), "02:00:07");
        assert_eq!(spaced(&[]), "");
    }
}
