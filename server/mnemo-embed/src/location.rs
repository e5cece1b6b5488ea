//! Where the model and ONNX Runtime are: `MNEMO_MODEL_DIR` / `ORT_DYLIB_PATH`,
//! else the workspace config (`[recall] model_dir`, `onnxruntime`), else the
//! directory `scripts/install-model` fills: `$XDG_DATA_HOME/mnemo/model`.

use std::path::{Path, PathBuf};

/// A model directory and the ONNX Runtime library to run it with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelLocation {
    pub model_dir: PathBuf,
    pub onnxruntime: PathBuf,
}

/// `$XDG_DATA_HOME/mnemo/model`, else `~/.local/share/mnemo/model`.
pub fn default_model_dir(xdg_data_home: Option<&str>, home: Option<&str>) -> Option<PathBuf> {
    let data = match xdg_data_home.filter(|d| d.starts_with('/')) {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(home.filter(|h| !h.is_empty())?).join(".local/share"),
    };
    Some(data.join("mnemo").join("model"))
}

impl ModelLocation {
    /// Resolve from environment values (first), then config values, then the default.
    pub fn resolve(
        env_model_dir: Option<&str>,
        env_onnxruntime: Option<&str>,
        config_model_dir: Option<&Path>,
        config_onnxruntime: Option<&Path>,
        default_dir: Option<PathBuf>,
    ) -> Option<ModelLocation> {
        let model_dir = env_model_dir
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .or_else(|| config_model_dir.map(Path::to_path_buf))
            .or(default_dir)?;
        let onnxruntime = env_onnxruntime
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
            .or_else(|| config_onnxruntime.map(Path::to_path_buf))
            .unwrap_or_else(|| model_dir.join("libonnxruntime.so"));
        Some(ModelLocation { model_dir, onnxruntime })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environment_then_config_then_default() {
        let default = Some(PathBuf::from("/data/mnemo/model"));
        let cfg = Some(Path::new("/cfg/model"));
        let ort = Some(Path::new("/cfg/libonnxruntime.so"));
        assert_eq!(
            ModelLocation::resolve(Some("/env/model"), Some("/env/ort.so"), cfg, ort, default.clone()),
            Some(ModelLocation { model_dir: "/env/model".into(), onnxruntime: "/env/ort.so".into() })
        );
        assert_eq!(
            ModelLocation::resolve(None, None, cfg, ort, default.clone()),
            Some(ModelLocation { model_dir: "/cfg/model".into(), onnxruntime: "/cfg/libonnxruntime.so".into() })
        );
        assert_eq!(
            ModelLocation::resolve(None, None, None, None, default),
            Some(ModelLocation {
                model_dir: "/data/mnemo/model".into(),
                onnxruntime: "/data/mnemo/model/libonnxruntime.so".into()
            })
        );
        assert_eq!(default_model_dir(Some("/x"), None), Some(PathBuf::from("/x/mnemo/model")));
        assert_eq!(default_model_dir(None, Some("/h")), Some(PathBuf::from("/h/.local/share/mnemo/model")));
    }
}
