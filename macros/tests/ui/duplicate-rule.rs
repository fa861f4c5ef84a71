use csikit_macros::csi_validate;

#[csi_validate]
struct Request {
    #[csi(required, max_bytes = 10, required)]
    name: String,
}

fn main() {}
