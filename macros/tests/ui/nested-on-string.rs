use csikit_macros::csi_validate;

#[csi_validate]
struct Request {
    #[csi(nested)]
    name: String,
}

fn main() {}
