//! `coapcc._core`: the native half of the `coapcc` Python package.
//!
//! Thin bindings of [`coapcc::api`]: the simulation, the scenario parsing and
//! the outputs are the command line's own; this module only moves text and
//! numbers across, releases the GIL while simulating, and turns errors into
//! `coapcc.CoapccError` and Ctrl-C into `KeyboardInterrupt`. [`algorithm`]
//! runs algorithms written in Python.

mod algorithm;

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use coapcc::api::{self, Source};
use coapcc::campaign::ceiling::Ceilings;
use coapcc::campaign::{Progress, Unit};
use coapcc::networks::{AnyPlan, NetworkKind};
use coapcc::scenario_file::Overrides;
use coapcc::store::Store;
use coapcc_rto::fault::AlgorithmFault;
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyInt};

create_exception!(
    _core,
    CoapccError,
    PyException,
    "A scenario, an override or a run was rejected; the message is the command line's."
);

create_exception!(
    _core,
    AlgorithmError,
    CoapccError,
    "An algorithm failed during a run: the message names it, the method, the value and the \
     run's time; an exception its Python code raised is the cause (`__cause__`, with its traceback)."
);

/// An optional integer argument `name` from 0 to `max`, as `T`: a Python int
/// out of range is a `CoapccError` naming the argument (not pyo3's
/// `OverflowError`, which names none), anything else a `TypeError`.
fn uint<T: TryFrom<u64>>(
    name: &str,
    value: Option<&Bound<'_, PyAny>>,
    max: u64,
) -> PyResult<Option<T>> {
    let Some(v) = value else {
        return Ok(None);
    };
    if !v.is_instance_of::<PyInt>() {
        return Err(PyTypeError::new_err(format!(
            "{name}: expected an integer, found {}",
            v.get_type().name()?
        )));
    }
    v.extract::<u64>()
        .ok()
        .filter(|&n| n <= max)
        .and_then(|n| T::try_from(n).ok())
        .map(Some)
        .ok_or_else(|| {
            CoapccError::new_err(format!(
                "{name}: expected an integer from 0 to {max}, found {v}"
            ))
        })
}

/// `clients` and `replications` (u32).
fn u32_arg(name: &str, value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<u32>> {
    uint(name, value, u64::from(u32::MAX))
}

/// `threads`: up to what any machine could hold (the per-core bound is
/// checked by the run itself).
fn threads_arg(value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<usize>> {
    uint("threads", value, u64::from(u32::MAX))
}

/// Every algorithm, as `coapcc algorithms` lists them: a list of dicts.
#[pyfunction]
fn algorithms(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    api::algorithms()
        .into_iter()
        .map(|a| {
            let d = PyDict::new(py);
            d.set_item("name", a.name)?;
            d.set_item("section", a.section)?;
            d.set_item("state_bytes", a.state_bytes)?;
            d.set_item("description", a.description)?;
            d.set_item("approximate", a.approximate)?;
            d.set_item("transport", a.transport)?;
            Ok(d)
        })
        .collect()
}

/// The published FCT rows (spec docs/spec/calibration-spec.md §1) as a JSON array.
#[pyfunction]
fn published() -> String {
    serde_json::to_string(&api::published()).expect("rows serialise")
}

/// Every network with its store tables: `(name, cells table, run table,
/// item table)`.
#[pyfunction]
fn networks() -> Vec<(&'static str, &'static str, &'static str, &'static str)> {
    NetworkKind::all()
        .map(|k| {
            let t = k.run_tables();
            (k.name(), k.cells_table(), t.runs, t.items[0].0)
        })
        .collect()
}

/// The embedded default scenario (TOML).
#[pyfunction]
fn default_scenario() -> &'static str {
    coapcc::scenario_file::DEFAULT_SCENARIO
}

/// Runs a scenario; see `coapcc.run` for the arguments. `kind` is
/// `default`, `path`, `toml` or `json`; `origin` names TOML or JSON text in
/// errors.
#[pyfunction]
#[pyo3(signature = (kind, text=None, origin=None, *, clients=None, buffer=None, errors=None,
    workload=None, nstart=None, algorithms=None, replications=None, seed=None, period=None,
    threads=None, force=false))]
#[allow(clippy::too_many_arguments)]
fn run<'py>(
    py: Python<'py>,
    kind: &str,
    text: Option<String>,
    origin: Option<String>,
    clients: Option<&Bound<'py, PyAny>>,
    buffer: Option<String>,
    errors: Option<String>,
    workload: Option<String>,
    nstart: Option<&Bound<'py, PyAny>>,
    algorithms: Option<String>,
    replications: Option<&Bound<'py, PyAny>>,
    seed: Option<&Bound<'py, PyAny>>,
    period: Option<f64>,
    threads: Option<&Bound<'py, PyAny>>,
    force: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let origin = origin.unwrap_or_else(|| "<string>".to_string());
    let source = match (kind, text) {
        ("default", _) => Source::Default,
        ("path", Some(t)) => Source::Path(t.into()),
        ("toml", Some(t)) => Source::Toml(t, origin),
        ("json", Some(t)) => Source::Json(t, origin),
        _ => {
            return Err(CoapccError::new_err(format!(
                "scenario source `{kind}`: expected default, path, toml or json (with text)"
            )))
        }
    };
    let overrides = Overrides {
        clients: u32_arg("clients", clients)?,
        buffer,
        errors,
        workload,
        nstart: u32_arg("nstart", nstart)?,
        algorithms,
        replications: u32_arg("replications", replications)?,
        seed: uint("seed", seed, u64::MAX)?,
        period,
    };
    let threads = threads_arg(threads)?;
    // The run goes on its own thread; this one polls Python's signal
    // handlers. On Ctrl-C the caller gets `KeyboardInterrupt` at once and the
    // run is stopped (within 65 536 events of each run under way), its
    // memory freed.
    let cancel = Arc::new(AtomicBool::new(false));
    let (done, finished) = mpsc::channel();
    let flag = Arc::clone(&cancel);
    std::thread::spawn(move || {
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
            let options = api::RunOptions {
                threads,
                force,
                stop: Some(&flag),
            };
            api::run(&source, &overrides, &options, &|| {})
        }));
        let _ = done.send(outcome);
    });
    let outcome = py.allow_threads(move || loop {
        match finished.recv_timeout(Duration::from_millis(50)) {
            Ok(Ok(Ok(o))) => return Ok(o),
            Ok(Ok(Err(e))) => return Err(error(e)),
            Ok(Err(p)) => return Err(from_panic(p)),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(CoapccError::new_err("the simulation thread stopped"))
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if let Err(e) = Python::with_gil(|py| py.check_signals()) {
                    cancel.store(true, Ordering::Relaxed);
                    return Err(e);
                }
            }
        }
    })?;
    let d = PyDict::new(py);
    d.set_item("network", outcome.network)?;
    d.set_item("json", outcome.json)?;
    d.set_item("table", outcome.table)?;
    d.set_item("markdown", outcome.markdown)?;
    d.set_item("records", outcome.records)?;
    d.set_item("histograms", outcome.histograms)?;
    d.set_item("runs", outcome.runs)?;
    d.set_item("events", outcome.events)?;
    Ok(d)
}

/// An error as a Python exception: `AlgorithmError` (caused by the
/// algorithm's own exception, if any) for an algorithm's fault,
/// `CoapccError` otherwise.
fn error(e: anyhow::Error) -> PyErr {
    match e.downcast_ref::<AlgorithmFault>() {
        Some(f) => fault(format!("{e:#}"), f),
        None => CoapccError::new_err(format!("{e:#}")),
    }
}

/// `AlgorithmError(text)` from `f`, with its Python exception as the cause.
fn fault(text: String, f: &AlgorithmFault) -> PyErr {
    let err = AlgorithmError::new_err(text);
    if let Some(cause) = f.cause.as_ref().and_then(|c| c.downcast_ref::<PyErr>()) {
        Python::with_gil(|py| err.set_cause(py, Some(cause.clone_ref(py))));
    }
    err
}

/// A panic of the simulation thread: an algorithm's fault raised while the
/// scenario was read (a Python algorithm's `__init__`) is its error; any
/// other panic goes on unwinding.
fn from_panic(p: Box<dyn std::any::Any + Send>) -> PyErr {
    match p.downcast::<AlgorithmFault>() {
        Ok(f) => fault(f.to_string(), &f),
        Err(p) => panic::resume_unwind(p),
    }
}

/// Runs `f` with an algorithm's fault raised in it (reading a scenario
/// builds its algorithms) as its error.
fn guarded<T>(f: impl FnOnce() -> anyhow::Result<T>) -> anyhow::Result<T> {
    coapcc_rto::fault::catch(f)?
}

/// A campaign file's plan: its network, name, definition hash, and one JSON
/// object per run (`stored` says whether `store` holds it). The plan's runs
/// are counted and held to the ceiling of runs before it is expanded, unless
/// `force` (running it is held to every ceiling).
#[pyfunction]
#[pyo3(signature = (path, store=None, force=false))]
fn campaign_plan<'py>(
    py: Python<'py>,
    path: std::path::PathBuf,
    store: Option<std::path::PathBuf>,
    force: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let plan = py
        .allow_threads(|| {
            guarded(|| api::campaign::load_counted(&path, &Ceilings::EXPANSION, force))
        })
        .map_err(error)?;
    let rows = py
        .allow_threads(|| api::campaign::plan_rows(&plan, store.as_deref()))
        .map_err(error)?;
    let (name, definition) = api::campaign::identity(&plan);
    let d = PyDict::new(py);
    d.set_item("network", api::campaign::network(&plan))?;
    d.set_item("name", name)?;
    d.set_item("definition", definition)?;
    d.set_item("rows", rows)?;
    Ok(d)
}

/// Runs a campaign file's missing runs into `store`, as `coapcc campaign`
/// does; returns its total, reused and computed run counts.
#[pyfunction]
#[pyo3(signature = (path, store, threads=None, progress=false, force=false))]
fn campaign_run<'py>(
    py: Python<'py>,
    path: std::path::PathBuf,
    store: std::path::PathBuf,
    threads: Option<&Bound<'py, PyAny>>,
    progress: bool,
    force: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let threads = threads_arg(threads)?;
    let out = py
        .allow_threads(|| {
            guarded(|| {
                let at_once = coapcc::budget::threads_named("threads", threads)?;
                let plan = api::campaign::load_checked(&path, at_once, &Ceilings::DEFAULT, force)?;
                api::campaign::run(&plan, &store, threads, force, progress)
            })
        })
        .map_err(error)?;
    let d = PyDict::new(py);
    d.set_item("total", out.total)?;
    d.set_item("reused", out.reused)?;
    d.set_item("computed", out.computed)?;
    Ok(d)
}

/// A campaign plan held natively, for executors that run its units one by
/// one: the driver prepares and commits, workers compute.
#[pyclass(frozen, module = "coapcc._core")]
struct CampaignPlan {
    plan: AnyPlan,
}

/// A unit as Python sees it: `(key, cell, replication, weight)`.
type UnitTuple = (String, usize, u32, u64);

fn unit(u: UnitTuple) -> Unit {
    Unit {
        key: u.0,
        cell: u.1,
        replication: u.2,
        weight: u.3,
    }
}

#[pymethods]
impl CampaignPlan {
    /// Loads and expands a campaign file, held first to the campaign
    /// ceilings of its whole plan, `threads` runs at a time, unless `force`.
    #[staticmethod]
    #[pyo3(signature = (path, threads=1, force=false))]
    fn load(
        py: Python<'_>,
        path: std::path::PathBuf,
        threads: usize,
        force: bool,
    ) -> PyResult<Self> {
        let plan = py
            .allow_threads(|| {
                guarded(|| api::campaign::load_checked(&path, threads, &Ceilings::DEFAULT, force))
            })
            .map_err(error)?;
        Ok(CampaignPlan { plan })
    }

    /// Expands campaign text; `origin` is the file it came from.
    #[staticmethod]
    fn parse(py: Python<'_>, text: &str, origin: &str) -> PyResult<Self> {
        let plan = py
            .allow_threads(|| guarded(|| api::campaign::parse(text, origin)))
            .map_err(error)?;
        Ok(CampaignPlan { plan })
    }

    /// The file's text and origin, from which a worker expands the same plan.
    fn text(&self) -> (String, String) {
        let (t, o) = api::campaign::plan_text(&self.plan);
        (t.to_string(), o.to_string())
    }

    /// Refuses the plan if one of its runs, `threads` at a time, would need
    /// more memory than this machine has available or more events than
    /// allowed, unless `force` (what `coapcc campaign` checks first).
    #[pyo3(signature = (threads=1, force=false))]
    fn check(&self, py: Python<'_>, threads: usize, force: bool) -> PyResult<()> {
        let (_, origin) = api::campaign::plan_text(&self.plan);
        py.allow_threads(|| api::campaign::check_budget(&self.plan, origin, threads, force))
            .map_err(error)
    }

    /// The definition hash.
    fn definition(&self) -> String {
        api::campaign::identity(&self.plan).1.to_string()
    }

    /// Runs one unit; its result as bytes for `StoreWriter.commit`.
    fn compute<'py>(&self, py: Python<'py>, unit_: UnitTuple) -> PyResult<Bound<'py, PyBytes>> {
        let u = unit(unit_);
        let bytes = py
            .allow_threads(|| guarded(|| api::campaign::compute(&self.plan, &u)))
            .map_err(error)?;
        Ok(PyBytes::new(py, &bytes))
    }
}

/// A results store open for writing by one driver.
#[pyclass(frozen, module = "coapcc._core")]
struct StoreWriter {
    store: Mutex<Store>,
}

impl StoreWriter {
    fn with<T>(&self, f: impl FnOnce(&mut Store) -> anyhow::Result<T>) -> anyhow::Result<T> {
        let mut store = self
            .store
            .lock()
            .map_err(|_| anyhow::anyhow!("the store writer failed earlier"))?;
        f(&mut store)
    }
}

#[pymethods]
impl StoreWriter {
    /// Opens (creating if needed) the store at `path`.
    #[new]
    fn new(py: Python<'_>, path: std::path::PathBuf) -> PyResult<Self> {
        let store = py
            .allow_threads(|| coapcc::networks::open_store(&path))
            .map_err(error)?;
        Ok(StoreWriter {
            store: Mutex::new(store),
        })
    }

    /// Registers `plan` and lists the units the store lacks, heaviest first:
    /// `(total, [(key, cell, replication, weight), …])`.
    fn prepare(&self, py: Python<'_>, plan: &CampaignPlan) -> PyResult<(usize, Vec<UnitTuple>)> {
        let (total, units) = py
            .allow_threads(|| self.with(|s| api::campaign::prepare(&plan.plan, s)))
            .map_err(error)?;
        let units = units
            .into_iter()
            .map(|u| (u.key, u.cell, u.replication, u.weight))
            .collect();
        Ok((total, units))
    }

    /// Stores a unit's result (bytes from `CampaignPlan.compute`) in one
    /// transaction.
    fn commit(
        &self,
        py: Python<'_>,
        plan: &CampaignPlan,
        unit_: UnitTuple,
        result: &[u8],
    ) -> PyResult<()> {
        let u = unit(unit_);
        py.allow_threads(|| self.with(|s| api::campaign::commit(&plan.plan, s, &u, result)))
            .map_err(error)
    }
}

/// The command line's campaign progress on stderr (a bar on a terminal,
/// plain lines otherwise).
#[pyclass(frozen, module = "coapcc._core", name = "Progress")]
struct PyProgress {
    inner: Mutex<Progress>,
}

#[pymethods]
impl PyProgress {
    /// Progress over `n` runs of summed weight `weight`; silent if `!show`.
    #[new]
    fn new(weight: u64, n: usize, show: bool) -> Self {
        PyProgress {
            inner: Mutex::new(Progress::new(weight, n, show)),
        }
    }

    /// A run of `weight` was stored.
    fn stored(&self, weight: u64) {
        if let Ok(mut p) = self.inner.lock() {
            p.stored(weight);
        }
    }

    /// Clears the bar.
    fn finish(&self) {
        if let Ok(p) = self.inner.lock() {
            p.finish();
        }
    }
}

/// Runs `coapcc load ARGS…` (the words after `load` on a command line)
/// against a real server, without the GIL; returns its JSON document.
#[pyfunction]
fn load(py: Python<'_>, args: Vec<String>) -> PyResult<String> {
    py.allow_threads(|| guarded(|| api::load_real(&args)))
        .map_err(error)
}

/// The native module.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("CoapccError", m.py().get_type::<CoapccError>())?;
    m.add("AlgorithmError", m.py().get_type::<AlgorithmError>())?;
    m.add_function(wrap_pyfunction!(algorithm::register_algorithm, m)?)?;
    m.add_function(wrap_pyfunction!(load, m)?)?;
    m.add_class::<algorithm::PyExchange>()?;
    m.add_class::<algorithm::PyAck>()?;
    m.add_class::<algorithm::PyRandom>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("MODEL_VERSION", coapcc_sim::MODEL_VERSION)?;
    m.add_function(wrap_pyfunction!(algorithms, m)?)?;
    m.add_function(wrap_pyfunction!(default_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(published, m)?)?;
    m.add_function(wrap_pyfunction!(networks, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(campaign_plan, m)?)?;
    m.add_function(wrap_pyfunction!(campaign_run, m)?)?;
    m.add_class::<CampaignPlan>()?;
    m.add_class::<StoreWriter>()?;
    m.add_class::<PyProgress>()?;
    Ok(())
}
