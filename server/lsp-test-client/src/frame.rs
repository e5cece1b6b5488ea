//! The base protocol's frames: `Content-Length: N\r\n\r\n` and N bytes of JSON.

use std::io::{BufRead, Write};

use serde_json::Value;

/// Write one message.
pub fn write(writer: &mut impl Write, message: &Value) -> std::io::Result<()> {
    let body = message.to_string();
    write!(writer, "Content-Length: {}\r\n\r\n{body}", body.len())?;
    writer.flush()
}

/// Read one message; `None` at the end of the stream (or a frame that is
/// not one: the tests' servers never send those).
pub fn read(reader: &mut impl BufRead) -> Option<Value> {
    let mut length = None;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).ok()? == 0 {
            return None;
        }
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some(value) = header.strip_prefix("Content-Length: ") {
            length = value.parse().ok();
        }
    }
    let mut body = vec![0; length?];
    reader.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_round_trips_and_the_end_is_none() {
        let mut bytes = Vec::new();
        write(&mut bytes, &serde_json::json!({ "id": 1, "result": "é" })).unwrap();
        assert!(bytes.starts_with(b"Content-Length: 22\r\n\r\n"), "{}", String::from_utf8_lossy(&bytes));
        let mut reader = std::io::Cursor::new(bytes);
        assert_eq!(read(&mut reader), Some(serde_json::json!({ "id": 1, "result": "é" })));
        assert_eq!(read(&mut reader), None);
    }
}
