use csikit_macros::csi_validate;

#[csi_validate]
struct Request(String);

fn main() {}
