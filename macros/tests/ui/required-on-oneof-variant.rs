use csikit_macros::csi_validate;

#[csi_validate]
enum AccessType {
    #[csi(required)]
    Mount(String),
}

fn main() {}
