//! `#[csi_service]`: records which RPC methods an `impl` block of a csikit server trait provides.

use proc_macro2::TokenStream;
use quote::quote;
use syn::spanned::Spanned;

/// The method the attribute writes; a block that already has it is left as it is.
const IMPLEMENTED: &str = "implemented";

pub fn expand(args: TokenStream, input: TokenStream) -> TokenStream {
    if !args.is_empty() {
        return syn::Error::new(args.span(), "#[csi_service] takes no arguments")
            .to_compile_error();
    }
    let mut item: syn::ItemImpl = match syn::parse2(input.clone()) {
        Ok(item) => item,
        Err(_) => {
            let error = syn::Error::new(
                input.span(),
                "#[csi_service] goes on an `impl` block of a csikit server trait, e.g. `impl csikit::v1::server::Controller for MyDriver`",
            )
            .to_compile_error();
            return quote! { #error #input };
        }
    };
    if item.trait_.is_none() {
        let error = syn::Error::new(item.self_ty.span(), "#[csi_service] needs a trait impl (`impl Controller for MyDriver`), not an inherent impl")
            .to_compile_error();
        return quote! { #error #item };
    }
    let mut names = Vec::new();
    for entry in &item.items {
        if let syn::ImplItem::Fn(f) = entry {
            if f.sig.ident == IMPLEMENTED {
                return quote! { #item };
            }
            names.push(f.sig.ident.to_string());
        }
    }
    let method: syn::ImplItem = syn::parse_quote! {
        fn implemented(&self) -> &'static [&'static str] {
            &[#(#names),*]
        }
    };
    item.items.push(method);
    quote! { #item }
}
