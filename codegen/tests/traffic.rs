//! No false positives on realistic traffic: requests shaped as kubelet and the external
//! sidecars send them (`tests/data/traffic`, each file says where its shape comes from in the
//! spec) validate clean.

use std::path::Path;

use prost::Message as _;
use prost_reflect::DynamicMessage;

#[test]
fn realistic_requests_validate_clean() {
    let pool = csikit::v1::descriptor_pool();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/traffic");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("traffic fixtures")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "txtpb"))
        .collect();
    files.sort();
    assert!(files.len() >= 15, "{} fixtures", files.len());
    for path in files {
        let file = path.file_name().and_then(|n| n.to_str()).expect("file name");
        let ty = file.split('.').next().expect("type prefix");
        let full = format!("csi.v1.{ty}");
        let desc =
            pool.get_message_by_name(&full).unwrap_or_else(|| panic!("{file}: no type {full}"));
        let text = std::fs::read_to_string(&path).expect("read fixture");
        let msg = DynamicMessage::parse_text_format(desc, &text)
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        if let Err(e) = csikit::validate_encoded(&full, &msg.encode_to_vec()) {
            panic!("{file}: {e}");
        }
    }
}
