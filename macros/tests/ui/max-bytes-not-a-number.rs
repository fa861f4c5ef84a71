use csikit_macros::csi_validate;

#[csi_validate]
struct Request {
    #[csi(max_bytes = "128")]
    name: String,
}

fn main() {}
