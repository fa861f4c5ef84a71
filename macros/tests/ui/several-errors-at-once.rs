use csikit_macros::csi_validate;

#[csi_validate]
struct Request {
    #[csi(required)]
    readonly: bool,
    #[csi(max_bytes = 1, bogus)]
    name: String,
}

fn main() {}
