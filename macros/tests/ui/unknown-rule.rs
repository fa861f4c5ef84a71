use csikit_macros::csi_validate;

#[csi_validate]
struct Request {
    #[csi(requird)]
    name: String,
}

fn main() {}
