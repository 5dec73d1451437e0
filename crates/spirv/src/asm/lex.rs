//! Splitting assembly text into words the way `spirv-as` does.
//!
//! Words are separated by space, tab, CR and LF; `;` starts a comment to the end of the line.
//! A word also ends (unless quoted or escaped) at `;`, `,`, `(` and `)`; since those are not
//! skipped as white space, they produce an empty word, which every later use rejects. Inside
//! a word, `"` toggles quoting and `\` escapes the next character. A NUL byte ends the text.

/// A word: its byte range in the text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Token {
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

/// Splits `text` into words.
pub(crate) fn tokenize(b: &[u8]) -> Vec<Token> {
    let n = b.len();
    let mut tokens = Vec::with_capacity(n / 6);
    let mut i = 0;
    loop {
        // Skip white space and comments.
        while i < n {
            match b[i] {
                b' ' | b'\t' | b'\r' | b'\n' => i += 1,
                b';' => {
                    while i < n && b[i] != b'\n' {
                        i += 1;
                    }
                }
                _ => break,
            }
        }
        if i >= n || b[i] == 0 {
            break;
        }
        let start = i;
        let (mut quoting, mut escaping) = (false, false);
        while i < n {
            let c = b[i];
            if c == 0 {
                break;
            }
            if c == b'\\' {
                escaping = !escaping;
            } else {
                match c {
                    b'"' if !escaping => quoting = !quoting,
                    b' ' | b'\t' | b'\n' | b'\r' | b';' | b',' | b'(' | b')'
                        if !escaping && !quoting =>
                    {
                        break;
                    }
                    _ => {}
                }
                escaping = false;
            }
            i += 1;
        }
        tokens.push(Token { start, end: i });
        if i == start {
            // An empty word at a separator: keep it (it is an error wherever it is read) and
            // step over the separator so that splitting goes on.
            i += 1;
        }
    }
    tokens
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<&str> {
        tokenize(text.as_bytes())
            .iter()
            .map(|t| &text[t.start..t.end])
            .collect()
    }

    #[test]
    fn quotes_escapes_and_comments() {
        assert_eq!(
            words("OpName %a \"x y\" ; c\nOpNop"),
            ["OpName", "%a", "\"x y\"", "OpNop"]
        );
        assert_eq!(words("\"a\\\" b\" c"), ["\"a\\\" b\"", "c"]);
        assert_eq!(words("a,b"), ["a", "", "b"]);
        assert_eq!(words("a;b\nc"), ["a", "c"]);
    }
}
