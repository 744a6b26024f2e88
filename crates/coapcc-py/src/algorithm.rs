//! Algorithms written in Python: a class with the events of
//! [`CongestionControl`] (`coapcc.Algorithm` documents them), registered in
//! the process's registry under its name, one instance per destination.
//!
//! [`PyAlgorithm`] is the Rust side of one instance: each event takes the
//! GIL, calls the method and lets it go (the simulation itself runs without
//! the GIL). A method that raises, returns what is not a number of seconds,
//! or leaves the instance's state above its bound raises an
//! [`AlgorithmFault`] carrying the Python exception, which stops the run
//! and reaches the caller as `coapcc.AlgorithmError` with the user's
//! traceback as its cause (`docs/decisions/algorithms-choices.md`,
//! "Algorithms written in Python").

use std::collections::HashMap;
use std::ptr::NonNull;
use std::sync::{Mutex, PoisonError};

use coapcc_rto::fault::{raise, AlgorithmFault};
use coapcc_rto::registry::{BoxedAlgorithm, NewAlgorithm};
use coapcc_rto::{Ack, AlgorithmParams, CongestionControl, Echo, ExchangeTimer, Marking, Random};
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;

/// Events between two measurements of an instance's state, once it has
/// seen that many (before, at 1, 2, 4, … events).
const MEASURE_EVERY: u32 = 1024;

/// What a registered class gives besides its methods.
struct Class {
    cls: Py<PyAny>,
    max_state: usize,
    marking: bool,
    spurious: bool,
}

/// The classes registered, by name: registering a name again (a notebook
/// cell run twice) replaces its class for the runs that start afterwards.
static CLASSES: Mutex<Option<HashMap<String, Class>>> = Mutex::new(None);

/// Registers `cls` under `name` (or replaces the class a name registered
/// from Python had). `state_bytes` is one fresh instance's measured state,
/// `max_state` the bound on any instance's; `marking` and `spurious` say
/// whether the class has those optional methods. Fails with the registry's
/// message if the name is invalid, taken by an algorithm not from Python,
/// or one of CoAP over TCP.
#[pyfunction]
#[pyo3(signature = (name, cls, summary, source, state_bytes, max_state, marking, spurious))]
#[allow(clippy::too_many_arguments)]
pub fn register_algorithm(
    name: String,
    cls: Py<PyAny>,
    summary: String,
    source: String,
    state_bytes: usize,
    max_state: usize,
    marking: bool,
    spurious: bool,
) -> PyResult<()> {
    let mut classes = CLASSES.lock().unwrap_or_else(PoisonError::into_inner);
    let classes = classes.get_or_insert_with(HashMap::new);
    let class = Class {
        cls,
        max_state,
        marking,
        spurious,
    };
    if let Some(known) = classes.get_mut(&name) {
        *known = class;
        return Ok(());
    }
    let key: &'static str = String::leak(name.clone());
    let build = move |p: &AlgorithmParams| -> Result<BoxedAlgorithm, coapcc_rto::ParamError> {
        p.check(key, &[])?;
        Ok(Box::new(PyAlgorithm::new(key)))
    };
    let algorithm = NewAlgorithm::new(name.clone(), build)
        .summary(summary)
        .section(source)
        .state_bytes(state_bytes);
    coapcc_workload::algorithm::register(algorithm).map_err(crate::CoapccError::new_err)?;
    classes.insert(name, class);
    Ok(())
}

/// One destination's state: an instance of a registered class.
pub struct PyAlgorithm {
    obj: Py<PyAny>,
    name: &'static str,
    max_state: usize,
    marking: bool,
    spurious: bool,
    events: u32,
}

impl PyAlgorithm {
    /// A new instance of the class registered as `name`.
    fn new(name: &'static str) -> Self {
        Python::with_gil(|py| {
            let (cls, max_state, marking, spurious) = {
                let classes = CLASSES.lock().unwrap_or_else(PoisonError::into_inner);
                let c = classes
                    .as_ref()
                    .and_then(|m| m.get(name))
                    .expect("a Python algorithm's builder is registered with its class");
                (c.cls.clone_ref(py), c.max_state, c.marking, c.spurious)
            };
            let obj = cls
                .call0(py)
                .unwrap_or_else(|e| raise(exception(py, name, "__init__", None, e)));
            let a = PyAlgorithm {
                obj,
                name,
                max_state,
                marking,
                spurious,
                events: 0,
            };
            a.check_state(py, "__init__", None);
            a
        })
    }

    /// Calls `method` with `args`; a raised exception is a fault at `now`.
    fn call<'py, A>(
        &mut self,
        py: Python<'py>,
        method: &'static str,
        now: Option<f64>,
        args: A,
    ) -> Bound<'py, PyAny>
    where
        A: pyo3::call::PyCallArgs<'py>,
    {
        let r = self
            .obj
            .bind(py)
            .call_method1(method, args)
            .unwrap_or_else(|e| raise(exception(py, self.name, method, now, e)));
        self.events = self.events.wrapping_add(1);
        let n = self.events;
        if n.is_multiple_of(MEASURE_EVERY) || (n < MEASURE_EVERY && n.is_power_of_two()) {
            self.check_state(py, method, now);
        }
        r
    }

    /// Raises a fault if the instance's state is above its bound.
    fn check_state(&self, py: Python<'_>, method: &'static str, now: Option<f64>) {
        let bytes = state_bytes(py, self.obj.bind(py))
            .unwrap_or_else(|e| raise(exception(py, self.name, method, now, e)));
        if bytes > self.max_state {
            raise(AlgorithmFault::new(
                self.name,
                method,
                now,
                format!(
                    "the instance's state grew to {bytes} bytes, above its bound of {} bytes \
                     (the class's `max_state_bytes`)",
                    self.max_state
                ),
            ));
        }
    }

    /// The number of seconds `value`, returned by `method`.
    fn seconds(&self, value: &Bound<'_, PyAny>, method: &'static str, now: f64) -> f64 {
        value.extract::<f64>().unwrap_or_else(|_| {
            raise(AlgorithmFault::new(
                self.name,
                method,
                Some(now),
                format!(
                    "returned {}; expected a number of seconds{}",
                    describe(value),
                    if method == "start" {
                        " or a coapcc.Exchange"
                    } else {
                        ""
                    }
                ),
            ))
        })
    }
}

/// `repr(value)` (shortened) and its type.
fn describe(value: &Bound<'_, PyAny>) -> String {
    let repr = value
        .repr()
        .map(|r| r.to_string())
        .unwrap_or_else(|_| "?".into());
    let repr = if repr.chars().count() > 60 {
        format!("{}…", repr.chars().take(60).collect::<String>())
    } else {
        repr
    };
    let ty = value
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_default();
    format!("{repr} ({ty})")
}

/// The fault of `method` raising `e`.
fn exception(
    py: Python<'_>,
    name: &str,
    method: &'static str,
    now: Option<f64>,
    e: PyErr,
) -> AlgorithmFault {
    let ty = e
        .get_type(py)
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "Exception".into());
    let text = e.value(py).to_string();
    let mut f = AlgorithmFault::new(name, method, now, format!("raised {ty}: {text}"));
    f.cause = Some(Box::new(e));
    f
}

/// The measured size of `obj`'s state (`coapcc._algorithm._state_bytes`).
fn state_bytes(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<usize> {
    static MEASURE: GILOnceCell<Py<PyAny>> = GILOnceCell::new();
    let f = MEASURE.get_or_try_init(py, || {
        Ok::<_, PyErr>(
            py.import("coapcc._algorithm")?
                .getattr("_state_bytes")?
                .unbind(),
        )
    })?;
    f.bind(py).call1((obj,))?.extract()
}

impl CongestionControl for PyAlgorithm {
    fn start(&mut self, now: f64, outstanding: usize, rng: &mut dyn Random) -> ExchangeTimer {
        Python::with_gil(|py| {
            let lent = PyRandom::lend(py, rng);
            let r = self.call(
                py,
                "start",
                Some(now),
                (now, outstanding, lent.obj.clone_ref(py)),
            );
            drop(lent);
            if let Ok(ex) = r.downcast::<PyExchange>() {
                return ex.borrow().timer();
            }
            let t = self.seconds(&r, "start", now);
            ExchangeTimer {
                initial: t,
                current: t,
                ..ExchangeTimer::default()
            }
        })
    }

    fn expire(&mut self, now: f64, ex: &mut ExchangeTimer, rng: &mut dyn Random) {
        Python::with_gil(|py| {
            let exchange = PyExchange::of(py, ex);
            let lent = PyRandom::lend(py, rng);
            let args = (now, exchange.clone_ref(py), lent.obj.clone_ref(py));
            let r = self.call(py, "expire", Some(now), args);
            drop(lent);
            let t = self.seconds(&r, "expire", now);
            exchange.borrow(py).keep(ex);
            ex.retransmissions = ex.retransmissions.saturating_add(1);
            ex.current = t;
        })
    }

    fn on_ack(&mut self, ex: &ExchangeTimer, ack: &Ack) {
        Python::with_gil(|py| {
            let exchange = PyExchange::of(py, ex);
            let ack = PyAck::from(ack);
            self.call(py, "on_ack", Some(ack.now), (exchange, ack));
        })
    }

    fn on_failure(&mut self, now: f64, ex: &ExchangeTimer) {
        Python::with_gil(|py| {
            let exchange = PyExchange::of(py, ex);
            self.call(py, "on_failure", Some(now), (now, exchange));
        })
    }

    fn reset(&mut self) {
        Python::with_gil(|py| {
            self.call(py, "reset", None, ());
        })
    }

    fn marking(&self) -> Marking {
        if !self.marking {
            return Marking::None;
        }
        Python::with_gil(|py| {
            let r = self
                .obj
                .bind(py)
                .call_method0("marking")
                .unwrap_or_else(|e| raise(exception(py, self.name, "marking", None, e)));
            let text: Option<String> = r.extract().ok();
            match text.as_deref() {
                Some("none") => Marking::None,
                Some("transmission-counter") => Marking::TransmissionCounter,
                Some("rexmit-count") => Marking::RexmitCount { probe: false },
                Some("rexmit-count-probe") => Marking::RexmitCount { probe: true },
                Some("token") => Marking::Token,
                _ => raise(AlgorithmFault::new(
                    self.name,
                    "marking",
                    None,
                    format!(
                        "returned {}; expected one of \"none\", \"transmission-counter\", \
                         \"rexmit-count\", \"rexmit-count-probe\", \"token\"",
                        describe(&r)
                    ),
                )),
            }
        })
    }

    fn spurious_detected(&self) -> u64 {
        if !self.spurious {
            return 0;
        }
        Python::with_gil(|py| {
            let r = self
                .obj
                .bind(py)
                .call_method0("spurious_detected")
                .unwrap_or_else(|e| raise(exception(py, self.name, "spurious_detected", None, e)));
            r.extract().unwrap_or_else(|_| {
                raise(AlgorithmFault::new(
                    self.name,
                    "spurious_detected",
                    None,
                    format!("returned {}; expected a count (int ≥ 0)", describe(&r)),
                ))
            })
        })
    }
}

/// What an exchange's timer data looks like from Python: `initial`,
/// `current` and `retransmissions` to read; `state`, `aux` and `aux2` for
/// the algorithm's own per-exchange values.
#[pyclass(module = "coapcc._core", name = "Exchange")]
#[derive(Clone, Copy)]
pub struct PyExchange {
    /// The exchange's first timer (s).
    #[pyo3(get)]
    initial: f64,
    /// The timer of its latest transmission (s).
    #[pyo3(get)]
    current: f64,
    /// Retransmissions sent so far.
    #[pyo3(get)]
    retransmissions: u8,
    /// The algorithm's own small integer (0–255).
    #[pyo3(get, set)]
    state: u8,
    /// The algorithm's own number.
    #[pyo3(get, set)]
    aux: f64,
    /// The algorithm's own second number.
    #[pyo3(get, set)]
    aux2: f64,
}

#[pymethods]
impl PyExchange {
    /// A new exchange's first timer of `timeout` seconds, with the
    /// algorithm's own values.
    #[new]
    #[pyo3(signature = (timeout, *, state=0, aux=0.0, aux2=0.0))]
    fn new(timeout: f64, state: u8, aux: f64, aux2: f64) -> Self {
        PyExchange {
            initial: timeout,
            current: timeout,
            retransmissions: 0,
            state,
            aux,
            aux2,
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "Exchange(initial={}, current={}, retransmissions={}, state={}, aux={}, aux2={})",
            self.initial, self.current, self.retransmissions, self.state, self.aux, self.aux2
        )
    }
}

impl PyExchange {
    fn of(py: Python<'_>, ex: &ExchangeTimer) -> Py<PyExchange> {
        let e = PyExchange {
            initial: ex.initial,
            current: ex.current,
            retransmissions: ex.retransmissions,
            state: ex.state,
            aux: ex.aux,
            aux2: ex.aux2,
        };
        Py::new(py, e).expect("a small object")
    }

    fn timer(&self) -> ExchangeTimer {
        ExchangeTimer {
            initial: self.initial,
            current: self.current,
            retransmissions: self.retransmissions,
            state: self.state,
            aux: self.aux,
            aux2: self.aux2,
        }
    }

    /// Keeps the algorithm's own values the method may have changed.
    fn keep(&self, ex: &mut ExchangeTimer) {
        ex.state = self.state;
        ex.aux = self.aux;
        ex.aux2 = self.aux2;
    }
}

/// The first matching acknowledgement of an exchange.
#[pyclass(module = "coapcc._core", name = "Ack", frozen)]
pub struct PyAck {
    /// Its arrival time (s).
    #[pyo3(get)]
    now: f64,
    /// Time since the exchange's original transmission (s).
    #[pyo3(get)]
    elapsed: f64,
    /// `(ordinal, rtt)` of the copy it answers, when the algorithm marks
    /// its transmissions and the peer echoed the mark; else `None`.
    #[pyo3(get)]
    echo: Option<(u8, f64)>,
    /// Whether it was a piggybacked response (not an Empty ACK).
    #[pyo3(get)]
    piggybacked: bool,
}

impl From<&Ack> for PyAck {
    fn from(a: &Ack) -> Self {
        PyAck {
            now: a.now,
            elapsed: a.elapsed,
            echo: a.echo.map(|Echo { ordinal, rtt }| (ordinal, rtt)),
            piggybacked: a.piggybacked,
        }
    }
}

#[pymethods]
impl PyAck {
    fn __repr__(&self) -> String {
        format!(
            "Ack(now={}, elapsed={}, echo={:?}, piggybacked={})",
            self.now, self.elapsed, self.echo, self.piggybacked
        )
    }
}

/// The run's random stream, lent to one call: `uniform()` in [0, 1) and
/// `uniform_in(lo, hi)`, the draws the built-ins make. Kept past its call
/// (or used from another thread) it refuses to draw.
#[pyclass(module = "coapcc._core", name = "Random", frozen)]
pub struct PyRandom {
    lent: Mutex<Option<Loan>>,
}

/// The generator lent, and the thread that lent it.
struct Loan {
    rng: NonNull<dyn Random + 'static>,
    thread: std::thread::ThreadId,
}

// SAFETY: the pointer is dereferenced only on the thread that lent it
// (checked in `PyRandom::with`) and only while the loan lasts, inside the
// call that holds the generator exclusively; elsewhere the loan is only
// moved or dropped.
#[allow(unsafe_code)]
unsafe impl Send for Loan {}

/// A [`PyRandom`] lent for one call; taken back when dropped.
struct Lent {
    obj: Py<PyRandom>,
}

impl PyRandom {
    fn lend(py: Python<'_>, rng: &mut dyn Random) -> Lent {
        let ptr: NonNull<dyn Random + '_> = NonNull::from(rng);
        // SAFETY: only the lifetime bound is erased. The pointer is used
        // only while the `Lent` lives (its drop ends the loan, also when a
        // fault unwinds), which is inside the call that holds `rng`
        // exclusively.
        #[allow(unsafe_code)]
        let rng: NonNull<dyn Random + 'static> = unsafe { std::mem::transmute(ptr) };
        let loan = Loan {
            rng,
            thread: std::thread::current().id(),
        };
        let obj = Py::new(
            py,
            PyRandom {
                lent: Mutex::new(Some(loan)),
            },
        )
        .expect("a small object");
        Lent { obj }
    }

    fn with<T>(&self, f: impl FnOnce(&mut dyn Random) -> T) -> PyResult<T> {
        let loan = self.lent.lock().unwrap_or_else(PoisonError::into_inner);
        let rng = loan
            .as_ref()
            .filter(|l| l.thread == std::thread::current().id())
            .ok_or_else(|| {
                pyo3::exceptions::PyRuntimeError::new_err(
                    "this Random was lent to one call of the algorithm, on its thread, and that \
                     call has returned",
                )
            })?
            .rng;
        // SAFETY: see `lend` and `Loan`: the loan is live and this is the
        // lending thread, inside the call; the draw does not re-enter Python.
        #[allow(unsafe_code)]
        let rng = unsafe { &mut *rng.as_ptr() };
        Ok(f(rng))
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        let lent = self.obj.get();
        *lent.lent.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }
}

#[pymethods]
impl PyRandom {
    /// A uniform draw in [0, 1).
    fn uniform(&self) -> PyResult<f64> {
        self.with(|r| r.uniform())
    }

    /// A uniform draw in [lo, hi): `lo + (hi - lo) * uniform()`.
    fn uniform_in(&self, lo: f64, hi: f64) -> PyResult<f64> {
        self.with(|r| r.uniform_in(lo, hi))
    }
}
