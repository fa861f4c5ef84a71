use csikit_macros::csi_validate;

#[csi_validate]
struct Request {
    #[csi(non_negative)]
    count: u32,
}

fn main() {}
