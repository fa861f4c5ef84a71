//! The embedded descriptor sets keep custom options and source info, and agree with the facts.

use csikit::registry as support;

#[test]
fn custom_options_and_source_info_survive() {
    for (facts, pool) in support::packages() {
        let in_facts =
            facts.messages.iter().flat_map(|m| m.fields.iter()).filter(|f| f.secret).count();
        // A package that does not import csi.proto (identity) has no csi_secret and no secrets.
        let Some(secret) = pool.get_extension_by_name("csi.v1.csi_secret") else {
            assert_eq!(in_facts, 0, "'{}' has secrets but no csi_secret option", facts.package);
            continue;
        };
        let mut secrets = 0;
        for m in facts.messages.iter() {
            let desc = pool
                .get_message_by_name(&m.full_name)
                .unwrap_or_else(|| panic!("'{}' in the pool", m.full_name));
            assert!(
                desc.parent_file().file_descriptor_proto().source_code_info.is_some(),
                "source info of '{}'",
                m.full_name
            );
            for f in m.fields.iter() {
                let field = desc
                    .get_field_by_name(&f.name)
                    .unwrap_or_else(|| panic!("'{}.{}'", m.full_name, f.name));
                let marked = field.options().get_extension(&secret).as_bool() == Some(true);
                if f.secret && marked {
                    secrets += 1;
                }
            }
        }
        assert_eq!(
            secrets, in_facts,
            "'{}': every secret in the facts is marked in the descriptors",
            facts.package
        );
    }
}

#[test]
fn every_rpc_in_the_descriptors_is_in_the_facts() {
    for (facts, pool) in support::packages() {
        let mut rpcs = 0;
        for service in pool.services().filter(|s| s.package_name() == facts.package) {
            for method in service.methods() {
                let path = format!("/{}/{}", service.full_name(), method.name());
                let m =
                    facts.method_by_path(&path).unwrap_or_else(|| panic!("'{path}' in the facts"));
                assert_eq!(m.input, method.input().full_name());
                rpcs += 1;
            }
        }
        assert_eq!(rpcs, facts.methods.len(), "'{}'", facts.package);
    }
}
