//! `spec.scheduler`: the KubeSchedulerConfiguration (the scenario's or the command line's)
//! and its profiles.

use std::path::Path;
use std::rc::Rc;

use serde_json::Value;

use super::scenario::ConfigurationRef;
use super::{Loader, paths, scenario};
use crate::error::InputError;
use crate::sched::profile::Profile;
use crate::yaml::Document;

impl Loader<'_> {
    /// The profiles of the scenario's (or the command line's) KubeSchedulerConfiguration;
    /// `None` without one.
    pub(super) fn profiles(
        &mut self,
        file: &Path,
        doc: &Rc<Document>,
        spec: &scenario::SchedulerSpec,
    ) -> Result<Option<Vec<Profile>>, InputError> {
        let at = "spec.scheduler.configuration.file";
        if (self.options.scheduler_config.is_some() || spec.configuration.is_some())
            && spec.added_affinity.is_some()
        {
            return Err(doc.error(
                file,
                "spec.scheduler.addedAffinity",
                "with a KubeSchedulerConfiguration, set addedAffinity in its NodeAffinityArgs",
            ));
        }
        let (target, shown) = match (&self.options.scheduler_config, &spec.configuration) {
            (Some(path), _) => (path.clone(), path.display().to_string()),
            (None, Some(ConfigurationRef::File(r))) => (
                file.parent().unwrap_or(Path::new(".")).join(&r.file),
                r.file.clone(),
            ),
            (None, Some(ConfigurationRef::Inline(_))) => {
                let inline = doc.nested("spec.scheduler.configuration");
                return crate::sched::profile::from_document(&inline, file).map(Some);
            }
            (None, None) => return Ok(None),
        };
        if self.options.scheduler_config.is_none() {
            paths::check_reference(file, &target)
                .map_err(|e| doc.error(file, at, format!("cannot load {shown:?}: {e}")))?;
        }
        let docs = self
            .documents(&target)
            .map_err(|e| doc.error(file, at, format!("cannot load {shown:?}: {e}")))?;
        let mut configs = docs.iter().filter(|d| {
            d.value.get("kind").and_then(Value::as_str) == Some(crate::sched::profile::KIND)
        });
        match (configs.next(), configs.next()) {
            (Some(config), None) => crate::sched::profile::from_document(config, &target).map(Some),
            (None, _) => Err(doc.error(
                file,
                at,
                format!("{shown:?} holds no KubeSchedulerConfiguration"),
            )),
            (Some(_), Some(_)) => Err(doc.error(
                file,
                at,
                format!("{shown:?} holds more than one KubeSchedulerConfiguration"),
            )),
        }
    }
}
