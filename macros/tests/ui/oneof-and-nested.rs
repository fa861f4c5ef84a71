use csikit_macros::csi_validate;

#[csi_validate]
struct Request {
    #[csi(oneof, nested)]
    access_type: Option<Inner>,
}

struct Inner;

fn main() {}
