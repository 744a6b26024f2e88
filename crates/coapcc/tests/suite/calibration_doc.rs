//! `docs/calibration.md` shows the table `coapcc calibrate` prints (every
//! published row of the constrained-link testbed, spec `docs/spec/calibration-spec.md` §1,
//! with the default seed and the published replication counts), verbatim:
//! a change of the model that moves a row must regenerate the document
//! (`cargo run --release -- calibrate`) together with its `MODEL_VERSION`
//! bump.

use std::path::Path;

#[test]
fn the_calibration_table_of_the_docs_is_what_calibrate_prints() {
    let rows = coapcc::calibrate::run(1, None, &|| {}).expect("calibrate runs");
    let table = coapcc::calibrate::markdown(&rows);
    let table = table.trim_end();
    assert!(table.lines().count() > 30, "{table}");
    let doc = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/calibration.md");
    let doc = std::fs::read_to_string(&doc).expect("docs/calibration.md");
    if !doc.contains(table) {
        let differ: Vec<&str> = table.lines().filter(|l| !doc.contains(l)).collect();
        panic!(
            "docs/calibration.md does not show `coapcc calibrate`'s table; regenerate it \
             (`cargo run --release -- calibrate`). Rows that differ:\n{}",
            differ.join("\n")
        );
    }
}
