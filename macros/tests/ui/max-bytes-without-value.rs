use csikit_macros::csi_validate;

#[csi_validate]
struct Request {
    #[csi(max_bytes)]
    name: String,
}

fn main() {}
