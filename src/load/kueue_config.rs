//! Kueue's manager Configuration in a scenario ([`crate::kueue::config`]): a `Configuration`
//! object in `spec.objects` (`config.kueue.x-k8s.io/v1beta1` or `v1beta2`), or the manager's
//! ConfigMap as `kubectl get configmap kueue-manager-config -n kueue-system -o yaml` prints it,
//! whose `data.controller_manager_config.yaml` holds the Configuration as text. Other
//! ConfigMaps are left out, counted in one warning. One Configuration at most, as the manager
//! reads one file; without one, the scenario's Kueue is a default install's.

use std::path::Path;

use super::Errors;
use super::origin::Origin;
use crate::kueue::config::{self, CONFIG_MAP_KEY, Read};
use crate::model::validate::FieldError;

/// What the scenario's Kueue objects said of Kueue's Configuration so far.
#[derive(Default)]
pub(super) struct Found {
    /// The Configuration read, and where it is (for warnings and a second one's error).
    config: Option<(Read, String)>,
    /// ConfigMaps that hold no Kueue Configuration.
    other_config_maps: usize,
}

impl Found {
    /// A `Configuration` object.
    pub fn configuration(&mut self, origin: &Origin, errors: &mut Errors) {
        let read = config::read(origin.value());
        self.keep(origin, origin.check_all(read), "", errors);
    }

    /// A ConfigMap: Kueue's Configuration when it holds `controller_manager_config.yaml`.
    pub fn config_map(&mut self, origin: &Origin, errors: &mut Errors) {
        let Some(text) = config::in_config_map(origin.value()) else {
            self.other_config_maps += 1;
            return;
        };
        let key = format!("data.{CONFIG_MAP_KEY}");
        let inner = match crate::yaml::parse_documents(text.to_string(), Path::new(CONFIG_MAP_KEY))
        {
            Ok(docs) => docs.into_iter().next().map(|d| d.value),
            Err(e) => {
                errors.push(origin.error_at(&key, e.to_string()));
                return;
            }
        };
        let Some(inner) = inner else {
            errors.push(origin.error_at(&key, "holds no Configuration".into()));
            return;
        };
        // As the manager reads the file: its apiVersion and kind first.
        let read = match (inner["apiVersion"].as_str(), inner["kind"].as_str()) {
            (Some(v), Some(config::KIND)) if config::API_VERSIONS.contains(&v) => {
                config::read(&inner)
            }
            (v, k) => Err(vec![FieldError::new(
                "",
                format!(
                    "expected a Kueue Configuration (apiVersion {}, kind {}), found apiVersion {v:?}, kind {k:?}",
                    config::API_VERSIONS.join(" or "),
                    config::KIND
                ),
            )]),
        };
        // The embedded text has no positions of its own: errors point at the data key and
        // name the field inside it.
        let read = read.map_err(|errs| {
            (errs.into_iter())
                .map(|e| FieldError::new(&crate::yaml::join_path(&key, &e.path), e.message))
                .collect()
        });
        self.keep(origin, origin.check_all(read), &key, errors);
    }

    fn keep(
        &mut self,
        origin: &Origin,
        read: Result<Read, Errors>,
        key: &str,
        errors: &mut Errors,
    ) {
        let read = match read {
            Ok(r) => r,
            Err(mut e) => return errors.append(&mut e),
        };
        let at = origin.describe();
        if let Some((_, first)) = &self.config {
            errors.push(origin.error_at(
                key,
                format!(
                    "a second Kueue Configuration (the first is at {first}): Kueue's manager reads one"
                ),
            ));
            return;
        }
        self.config = Some((read, at));
    }

    /// The Configuration's `waitForPodsReady` (a default install's without one) and the
    /// warnings: ignored fields, left-out ConfigMaps.
    pub fn settle(
        self,
        has_kueue: bool,
    ) -> (Option<crate::kueue::config::WaitForPodsReady>, Vec<String>) {
        let mut warnings = Vec::new();
        if self.other_config_maps > 0 {
            let n = self.other_config_maps;
            warnings.push(format!(
                "spec.objects: {n} ConfigMap{} left out: schedsim reads a ConfigMap only for Kueue's Configuration (data.{CONFIG_MAP_KEY})",
                if n == 1 { "" } else { "s" }
            ));
        }
        let Some((read, at)) = self.config else {
            let default = has_kueue.then(crate::kueue::config::WaitForPodsReady::installed_default);
            return (default, warnings);
        };
        if !has_kueue {
            warnings.push(format!(
                "Kueue Configuration ({at}): the scenario has no ClusterQueue or LocalQueue, so it changes nothing"
            ));
        }
        warnings.extend(config::ignored_warning(&read.ignored, &at));
        (read.wait_for_pods_ready, warnings)
    }
}
