//! GPU sharing and fragmentation as the FGD paper studies them (Weng et al., "Beware of
//! Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation Gradient Descent",
//! USENIX ATC'23), reproducing its simulator (`hkust-adsl/kubernetes-scheduler-simulator`
//! at `8f3d641`): pods that take a share of one GPU or whole GPUs, placed one after another
//! on the openb cluster by one of six scoring policies, with the cluster's fragmentation
//! after each arrival (its policies and fragmentation are `sched::gpu_share`'s, which the
//! scheduler's score plugins share). `schedsim fgd` runs the paper's matrix (workloads × policies × seeds).

pub mod arrivals;
pub mod charts;
pub mod discrete;
pub mod experiment;
pub mod gorand;
pub mod input;
pub mod run;
