use csikit_macros::csi_validate;

#[csi_validate]
struct Request {
    #[csi(required)]
    readonly: bool,
}

fn main() {}
