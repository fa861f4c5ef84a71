use csikit_macros::csi_validate;

#[csi_validate]
struct Request {
    #[csi(secret_keys)]
    secrets: String,
}

fn main() {}
