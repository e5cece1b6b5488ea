//! The inputs and outputs an ONNX model declares, read from its protobuf
//! bytes without a runtime, so that a model fastembed cannot feed is refused
//! with their names before ONNX Runtime fails on the first text.
//!
//! fastembed feeds `input_ids` and `attention_mask` always, and
//! `token_type_ids` when the model takes it; it reads the only output, or
//! one named `text_embeds`, `last_hidden_state` or `sentence_embedding`.
//! This reads only the graph's inputs, initializers and outputs (ModelProto
//! field 7, GraphProto fields 5, 11 and 12, and the names in them): it is
//! not an ONNX parser and must not grow into one.

/// The graph's inputs that must be fed (not initializers) and its outputs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature {
    pub inputs: Vec<String>,
    pub outputs: Vec<String>,
}

/// The outputs fastembed's embedding reads when there is more than one.
const EMBEDDING_OUTPUTS: [&str; 3] = ["text_embeds", "last_hidden_state", "sentence_embedding"];

impl Signature {
    /// Read the signature from a model file's bytes.
    pub fn read(model: &[u8]) -> Result<Signature, String> {
        let not_onnx = |e: String| format!("model.onnx is not an ONNX model ({e})");
        let graph = fields(model)
            .map_err(not_onnx)?
            .into_iter()
            .rev()
            .find_map(|(number, value)| match (number, value) {
                (7, Value::Bytes(graph)) => Some(graph),
                _ => None,
            })
            .ok_or_else(|| "model.onnx holds no graph".to_string())?;
        let mut inputs = Vec::new();
        let mut outputs = Vec::new();
        let mut initializers = Vec::new();
        for (number, value) in fields(graph).map_err(not_onnx)? {
            let Value::Bytes(message) = value else { continue };
            match number {
                5 => initializers.push(name_field(message, 8).map_err(not_onnx)?),
                11 => inputs.push(name_field(message, 1).map_err(not_onnx)?),
                12 => outputs.push(name_field(message, 1).map_err(not_onnx)?),
                _ => {}
            }
        }
        // Older exports list initializers among the inputs: those need no feeding.
        inputs.retain(|input| !initializers.contains(input));
        Ok(Signature { inputs, outputs })
    }

    /// Refuse a model fastembed cannot run: one that does not take
    /// `input_ids` and `attention_mask`, wants an input nothing feeds, or
    /// has no output the embedding can read.
    pub fn check_feedable(&self) -> Result<(), String> {
        let takes = |name: &str| self.inputs.iter().any(|input| input == name);
        let fed = ["input_ids", "attention_mask", "token_type_ids"];
        let unfed: Vec<&str> = self.inputs.iter().map(String::as_str).filter(|input| !fed.contains(input)).collect();
        if !takes("input_ids") || !takes("attention_mask") || !unfed.is_empty() {
            return Err(format!(
                "model.onnx takes the inputs {}; mnemo feeds input_ids, attention_mask and (when the model takes it) \
                 token_type_ids: export a BERT-style encoder with those inputs",
                self.inputs.join(", ")
            ));
        }
        let readable = self.outputs.len() == 1 || self.outputs.iter().any(|o| EMBEDDING_OUTPUTS.contains(&o.as_str()));
        if !readable {
            return Err(format!(
                "model.onnx has the outputs {}; mnemo reads its only output or one named {}",
                self.outputs.join(", "),
                EMBEDDING_OUTPUTS.join(", ")
            ));
        }
        Ok(())
    }
}

/// A protobuf field's value; only length-delimited ones are kept.
enum Value<'a> {
    Bytes(&'a [u8]),
    Other,
}

/// The top-level fields of one protobuf message, in order.
fn fields(mut bytes: &[u8]) -> Result<Vec<(u64, Value<'_>)>, String> {
    let mut out = Vec::new();
    while !bytes.is_empty() {
        let key = varint(&mut bytes)?;
        let (number, wire_type) = (key >> 3, key & 7);
        let value = match wire_type {
            0 => {
                varint(&mut bytes)?;
                Value::Other
            }
            1 => {
                bytes = bytes.get(8..).ok_or("a fixed64 field is cut short")?;
                Value::Other
            }
            2 => {
                let length = usize::try_from(varint(&mut bytes)?).map_err(|_| "a field is too long")?;
                if length > bytes.len() {
                    return Err("a field is cut short".into());
                }
                let (value, rest) = bytes.split_at(length);
                bytes = rest;
                Value::Bytes(value)
            }
            5 => {
                bytes = bytes.get(4..).ok_or("a fixed32 field is cut short")?;
                Value::Other
            }
            other => return Err(format!("wire type {other} in field {number}")),
        };
        out.push((number, value));
    }
    Ok(out)
}

fn varint(bytes: &mut &[u8]) -> Result<u64, String> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let (&byte, rest) = bytes.split_first().ok_or("a number is cut short")?;
        *bytes = rest;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err("a number is longer than 64 bits".into())
}

/// The string field `number` of a message (a name).
fn name_field(message: &[u8], number: u64) -> Result<String, String> {
    let name = fields(message)?.into_iter().find_map(|(n, value)| match (n, value) {
        (n, Value::Bytes(name)) if n == number => Some(name),
        _ => None,
    });
    Ok(String::from_utf8_lossy(name.unwrap_or_default()).into_owned())
}

/// Protobuf encoding for tests: a length-delimited field.
#[cfg(test)]
pub(crate) fn length_delimited(number: u64, content: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut push_varint = |mut value: u64| loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            out.push(byte);
            break;
        }
        out.push(byte | 0x80);
    };
    push_varint((number << 3) | 2);
    push_varint(content.len() as u64);
    out.extend_from_slice(content);
    out
}

/// A model whose graph has these inputs, initializers and outputs (and nothing else).
#[cfg(test)]
pub(crate) fn model_bytes(inputs: &[&str], initializers: &[&str], outputs: &[&str]) -> Vec<u8> {
    let mut graph = length_delimited(2, b"graph");
    for name in initializers {
        graph.extend(length_delimited(5, &[vec![8, 1], length_delimited(8, name.as_bytes())].concat()));
    }
    for name in inputs {
        graph.extend(length_delimited(11, &length_delimited(1, name.as_bytes())));
    }
    for name in outputs {
        graph.extend(length_delimited(12, &length_delimited(1, name.as_bytes())));
    }
    [vec![8, 7], length_delimited(2, b"test"), length_delimited(7, &graph)].concat()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bert_export_is_feedable() {
        let bytes = model_bytes(
            &["input_ids", "attention_mask", "token_type_ids"],
            &["embeddings.weight"],
            &["last_hidden_state"],
        );
        let signature = Signature::read(&bytes).unwrap();
        assert_eq!(signature.inputs, ["input_ids", "attention_mask", "token_type_ids"]);
        assert_eq!(signature.outputs, ["last_hidden_state"]);
        assert!(signature.check_feedable().is_ok());
    }

    #[test]
    fn initializers_listed_as_inputs_need_no_feeding() {
        let bytes = model_bytes(
            &["input_ids", "attention_mask", "position_ids"],
            &["position_ids"],
            &["a", "sentence_embedding"],
        );
        let signature = Signature::read(&bytes).unwrap();
        assert_eq!(signature.inputs, ["input_ids", "attention_mask"]);
        assert!(signature.check_feedable().is_ok());
    }

    #[test]
    fn a_model_without_an_attention_mask_or_wanting_more_is_refused_with_the_names() {
        let no_mask = Signature::read(&model_bytes(&["input_ids"], &[], &["last_hidden_state"])).unwrap();
        let err = no_mask.check_feedable().unwrap_err();
        assert!(
            err.starts_with("model.onnx takes the inputs input_ids; mnemo feeds input_ids, attention_mask"),
            "{err}"
        );
        let more =
            Signature::read(&model_bytes(&["input_ids", "attention_mask", "pixel_values"], &[], &["x"])).unwrap();
        assert!(more.check_feedable().unwrap_err().contains("input_ids, attention_mask, pixel_values"));
        let outputs =
            Signature::read(&model_bytes(&["input_ids", "attention_mask"], &[], &["logits", "pooler"])).unwrap();
        assert!(outputs.check_feedable().unwrap_err().starts_with("model.onnx has the outputs logits, pooler"));
    }

    #[test]
    fn bytes_that_are_not_a_model_are_an_error_not_a_panic() {
        assert!(Signature::read(b"not an onnx graph").unwrap_err().starts_with("model.onnx is not an ONNX model"));
        assert_eq!(Signature::read(b"").unwrap_err(), "model.onnx holds no graph");
        let cut = model_bytes(&["input_ids"], &[], &[]);
        assert!(Signature::read(&cut[..cut.len() - 3]).is_err());
        assert!(Signature::read(&[0xff; 11]).is_err());
    }
}
