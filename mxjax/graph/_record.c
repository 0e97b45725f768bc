/* graph.bulk's recorder in C: appends one imperative op to a thread's bulk segment.
 *
 * Exactly the logic of graph/bulk.py's ``record`` (which stays, and runs where this extension was
 * not built): the Python version costs ~1.3 us per op, this one a fraction of that, which is
 * what lets a chain of small imperative ops keep up with eager frameworks.  The segment's lock
 * is held while the segment changes, as in Python: reading a leaf's ``aval`` or inferring a new
 * op's outputs runs Python code, during which another thread may try to run this segment.
 *
 * Also the array operators' fast path (``OpMethod``, below): ``x * 2`` recorded in one C call.
 */
#include "_slots.h"

static PyObject *array_type, *pending_type, *arrayimpl_type, *inferred, *infer_missing, *host_type, *host_leaf;
static PyObject *s_lock, *s_acquire, *s_release, *s_leaf_refs, *s_leaves, *s_handles, *s_nodes,
    *s_cap, *s_run, *s_var, *s_data, *s_ag, *s_dc, *s_segment, *s_index, *s_aval, *s_value,
    *s_error, *s_owner, *s_sharers, *s_source;
static PyObject *empty_tuple;

/* Attributes are __slots__: read and written at their offsets, as CPython's member descriptors do,
 * where configure() found all of a class's to be plain object slots (``*_slots``); otherwise
 * through getattr/setattr. */
enum { P_SEGMENT, P_INDEX, P_AVAL, P_VALUE, P_ERROR, P_OWNER, P_SHARERS, P_SOURCE, P_COUNT };
enum { A_DATA, A_VAR, A_AG, A_DC, A_COUNT };
static PyObject **pending_names[P_COUNT] = {&s_segment, &s_index, &s_aval, &s_value, &s_error, &s_owner,
                                            &s_sharers, &s_source};
static PyObject **array_names[A_COUNT] = {&s_data, &s_var, &s_ag, &s_dc};
static Py_ssize_t pending_offsets[P_COUNT], array_offsets[A_COUNT];
static PyObject *array_descrs[A_COUNT];
static int pending_slots, array_slots, segment_slots;
static PyObject *array_classes; /* class -> True (its slots are the array class's) or False */
enum { S_LOCK, S_LEAF_REFS, S_LEAVES, S_HANDLES, S_NODES, S_CAP, S_COUNT };
static PyObject **segment_names[S_COUNT] = {&s_lock, &s_leaf_refs, &s_leaves, &s_handles, &s_nodes, &s_cap};
static Py_ssize_t segment_offsets[S_COUNT];
static PyObject *segment_type;

/* Whether objects of ``cls`` (a subclass of the array class) keep the array class's slots. */
static int array_fast(PyTypeObject *cls) {
    return keeps_slots(cls, array_slots, array_names, array_descrs, A_COUNT, array_classes);
}

static inline PyObject *get_slot(PyObject *obj, int fast, Py_ssize_t offset, PyObject *name) {
    if (fast) {
        PyObject *value = *(PyObject **)((char *)obj + offset);
        if (value != NULL) return Py_NewRef(value);
    }
    return PyObject_GetAttr(obj, name); /* (an unset slot raises AttributeError here) */
}

static inline int set_slot(PyObject *obj, int fast, Py_ssize_t offset, PyObject *name, PyObject *value) {
    if (fast) {
        PyObject **address = (PyObject **)((char *)obj + offset);
        PyObject *old = *address;
        *address = Py_NewRef(value);
        Py_XDECREF(old);
        return 0;
    }
    return PyObject_SetAttr(obj, name, value);
}

#define SGET(obj, i) \
    get_slot(obj, segment_fast, segment_offsets[i], *segment_names[i])
#define PGET(obj, i) get_slot(obj, pending_slots, pending_offsets[i], *pending_names[i])
#define PSET(obj, i, v) set_slot(obj, pending_slots, pending_offsets[i], *pending_names[i], v)
#define AGET(obj, fast, i) get_slot(obj, fast, array_offsets[i], *array_names[i])
#define ASET(obj, fast, i, v) set_slot(obj, fast, array_offsets[i], *array_names[i], v)

static int configured(void) {
    if (array_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "mxjax.graph._record: configure() was not called");
        return 0;
    }
    return 1;
}

static PyObject *configure(PyObject *self, PyObject *args) {
    PyObject *a, *p, *seg, *impl, *inf, *missing, *host, *leaf;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!OO!O:configure", &PyType_Type, &a, &PyType_Type, &p, &PyType_Type, &seg,
                          &PyType_Type, &impl, &PyDict_Type, &inf, &missing, &PyType_Type, &host, &leaf))
        return NULL;
    Py_INCREF(host); Py_XSETREF(host_type, host);
    Py_INCREF(leaf); Py_XSETREF(host_leaf, leaf);
    Py_INCREF(seg); Py_XSETREF(segment_type, seg);
    segment_slots = 1;
    for (int i = 0; i < S_COUNT; i++) {
        segment_offsets[i] = slot_of(seg, *segment_names[i], NULL);
        segment_slots = segment_slots && segment_offsets[i] >= 0;
    }
    Py_INCREF(a); Py_XSETREF(array_type, a);
    Py_INCREF(p); Py_XSETREF(pending_type, p);
    Py_INCREF(impl); Py_XSETREF(arrayimpl_type, impl);
    Py_INCREF(inf); Py_XSETREF(inferred, inf);
    Py_INCREF(missing); Py_XSETREF(infer_missing, missing);
    pending_slots = 1;
    for (int i = 0; i < P_COUNT; i++) {
        pending_offsets[i] = slot_of(p, *pending_names[i], NULL);
        pending_slots = pending_slots && pending_offsets[i] >= 0;
    }
    array_slots = 1;
    for (int i = 0; i < A_COUNT; i++) {
        Py_CLEAR(array_descrs[i]);
        array_offsets[i] = slot_of(a, *array_names[i], &array_descrs[i]);
        array_slots = array_slots && array_offsets[i] >= 0;
    }
    Py_XSETREF(array_classes, PyDict_New());
    if (array_classes == NULL) return NULL;
    Py_RETURN_NONE;
}

/* One output: a new Pending (made without __init__) held by a new array of ``out_cls``. */
static PyObject *make_output(PyObject *segment, PyObject *handles, PyObject *structure, PyObject *aval,
                             PyObject *source, PyTypeObject *out_cls, int out_fast) {
    PyObject *handle = NULL, *array = NULL, *index = NULL, *ref = NULL;
    handle = PyBaseObject_Type.tp_new((PyTypeObject *)pending_type, empty_tuple, NULL);
    if (handle == NULL) goto fail;
    index = PyLong_FromSsize_t(PyList_GET_SIZE(handles));
    if (index == NULL) goto fail;
    if (PSET(handle, P_SEGMENT, segment) < 0 || PSET(handle, P_INDEX, index) < 0 || PSET(handle, P_AVAL, aval) < 0 ||
        PSET(handle, P_SOURCE, source) < 0 || PSET(handle, P_VALUE, Py_None) < 0 ||
        PSET(handle, P_ERROR, Py_None) < 0 || PSET(handle, P_SHARERS, Py_None) < 0)
        goto fail;
    array = PyBaseObject_Type.tp_new(out_cls, empty_tuple, NULL);
    if (array == NULL) goto fail;
    if (ASET(array, out_fast, A_DATA, structure) < 0 || ASET(array, out_fast, A_VAR, handle) < 0 ||
        ASET(array, out_fast, A_AG, Py_None) < 0 || ASET(array, out_fast, A_DC, Py_None) < 0)
        goto fail;
    ref = PyWeakref_NewRef(array, NULL);
    if (ref == NULL || PSET(handle, P_OWNER, ref) < 0 || PyList_Append(handles, handle) < 0) goto fail;
    Py_DECREF(ref);
    Py_DECREF(index);
    Py_DECREF(handle);
    return array;
fail:
    Py_XDECREF(ref);
    Py_XDECREF(array);
    Py_XDECREF(index);
    Py_XDECREF(handle);
    return NULL;
}

/* A constant input's arg: (type, value), or (float, value, repr) for -0.0 and nan (equal keys otherwise). */
static PyObject *constant_arg(PyObject *x, PyObject *kind) {
    if (kind == (PyObject *)&PyFloat_Type) {
        double v = PyFloat_AS_DOUBLE(x);
        if (v == 0.0 || v != v) {
            PyObject *text = PyObject_Repr(x);
            if (text == NULL) return NULL;
            PyObject *arg = PyTuple_Pack(3, kind, x, text);
            Py_DECREF(text);
            return arg;
        }
    }
    return PyTuple_Pack(2, kind, x);
}

/* Appends an input's arg and its key; steals ``arg`` (NULL: a failure already raised). */
static int append_input(PyObject *args, PyObject *keys, PyObject *arg, PyObject *key) {
    if (arg == NULL) return -1;
    int bad = PyList_Append(args, arg) < 0 || PyList_Append(keys, key) < 0;
    Py_DECREF(arg);
    return bad ? -1 : 0;
}

static int is_constant_type(PyObject *kind) {
    return kind == (PyObject *)&PyLong_Type || kind == (PyObject *)&PyFloat_Type ||
           kind == (PyObject *)&PyBool_Type || kind == (PyObject *)&PyComplex_Type;
}

/* The body of record, with the segment's lock held.  Returns a new reference: the output(s),
 * Py_None (cannot be recorded: the caller runs the op now), or NULL with an exception set.
 * ``*full`` is set when the segment reached its size limit. */
static PyObject *record_locked(PyObject *segment, int segment_fast, PyObject *op, PyObject *fn, PyObject *inputs,
                               PyObject *params, PyTypeObject *out_cls, int *full) {
    PyObject *args = NULL, *keys = NULL, *source = Py_None, *result = NULL, *leaf_refs = NULL, *leaves = NULL;
    PyObject *handles = NULL, *nodes = NULL, *key = NULL, *found = NULL, *out = NULL, *node = NULL;
    PyObject *args_tuple = NULL, *cap = NULL;
    Py_INCREF(source);
    Py_ssize_t n = PyTuple_GET_SIZE(inputs);
    args = PyList_New(0);
    keys = PyList_New(0);
    if (args == NULL || keys == NULL || PyList_Append(keys, fn) < 0) goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = PyTuple_GET_ITEM(inputs, i);
        PyObject *data = NULL; /* a leaf: new reference */
        int is_array = PyObject_TypeCheck(x, (PyTypeObject *)array_type);
        if (is_array) {
            int fast = array_fast(Py_TYPE(x));
            PyObject *var = AGET(x, fast, A_VAR);
            if (var == NULL) goto done;
            if (var == Py_None) {
                Py_DECREF(var);
                data = AGET(x, fast, A_DATA);
                if (data == NULL) goto done;
                if ((PyObject *)Py_TYPE(data) != arrayimpl_type) {
                    Py_DECREF(data);
                    result = Py_NewRef(Py_None);
                    goto done;
                }
            } else if ((PyObject *)Py_TYPE(var) == pending_type) {
                PyObject *owner_segment = PGET(var, P_SEGMENT);
                PyObject *value = owner_segment ? PGET(var, P_VALUE) : NULL;
                if (value == NULL) {
                    Py_XDECREF(owner_segment);
                    Py_DECREF(var);
                    goto done;
                }
                Py_DECREF(owner_segment); /* compared by identity only; the segment holds it */
                if (owner_segment == segment && value == Py_None) {
                    Py_DECREF(value);
                    PyObject *index = PGET(var, P_INDEX);
                    PyObject *aval = index ? PGET(var, P_AVAL) : NULL;
                    Py_DECREF(var);
                    if (aval == NULL) {
                        Py_XDECREF(index);
                        goto done;
                    }
                    if (source == Py_None) Py_SETREF(source, Py_NewRef(index));
                    int bad = append_input(args, keys, index, aval);
                    Py_DECREF(aval);
                    if (bad) goto done;
                    continue;
                }
                Py_DECREF(var);
                if (value == Py_None) { /* another thread's segment, or a failed one */
                    Py_DECREF(value);
                    result = Py_NewRef(Py_None);
                    goto done;
                }
                /* computed already: settle the array */
                if (ASET(x, fast, A_DATA, value) < 0 || ASET(x, fast, A_VAR, Py_None) < 0) {
                    Py_DECREF(value);
                    goto done;
                }
                data = value;
            } else {
                Py_DECREF(var);
                result = Py_NewRef(Py_None);
                goto done;
            }
        } else {
            PyObject *kind = (PyObject *)Py_TYPE(x);
            if (kind == arrayimpl_type) {
                data = Py_NewRef(x);
            } else if (is_constant_type(kind)) {
                if (append_input(args, keys, constant_arg(x, kind), kind) < 0) goto done;
                continue;
            } else if (x == Py_None) {
                if (append_input(args, keys, PyTuple_Pack(2, Py_None, Py_None), Py_None) < 0) goto done;
                continue;
            } else if (kind == host_type) { /* a NumPy array: a leaf of its own (never a value's source) */
                PyObject *pair = PyObject_CallOneArg(host_leaf, x);
                if (pair == NULL) goto done;
                if (pair == Py_None) { /* not an array a program takes: the op runs now */
                    result = pair;
                    goto done;
                }
                if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
                    Py_DECREF(pair);
                    PyErr_SetString(PyExc_TypeError, "bulk record: host_leaf must return (data, aval)");
                    goto done;
                }
                if (leaves == NULL) {
                    leaf_refs = SGET(segment, S_LEAF_REFS);
                    leaves = leaf_refs ? SGET(segment, S_LEAVES) : NULL;
                }
                PyObject *ref = leaves ? PyLong_FromSsize_t(-1 - PyList_GET_SIZE(leaves)) : NULL;
                if (ref == NULL || PyList_Append(leaves, PyTuple_GET_ITEM(pair, 0)) < 0) {
                    Py_XDECREF(ref);
                    Py_DECREF(pair);
                    goto done;
                }
                int bad = append_input(args, keys, ref, PyTuple_GET_ITEM(pair, 1));
                Py_DECREF(pair);
                if (bad) goto done;
                continue;
            } else {
                result = Py_NewRef(Py_None);
                goto done;
            }
        }
        /* a leaf: each array once, however often it is read */
        if (leaf_refs == NULL) {
            leaf_refs = SGET(segment, S_LEAF_REFS);
            leaves = leaf_refs ? SGET(segment, S_LEAVES) : NULL;
            if (leaves == NULL) {
                Py_DECREF(data);
                goto done;
            }
        }
        PyObject *id = PyLong_FromVoidPtr(data);
        if (id == NULL) {
            Py_DECREF(data);
            goto done;
        }
        PyObject *ref = PyDict_GetItemWithError(leaf_refs, id); /* borrowed */
        if (ref == NULL) {
            if (PyErr_Occurred()) {
                Py_DECREF(id);
                Py_DECREF(data);
                goto done;
            }
            PyObject *made = PyLong_FromSsize_t(-1 - PyList_GET_SIZE(leaves));
            if (made == NULL || PyDict_SetItem(leaf_refs, id, made) < 0 || PyList_Append(leaves, data) < 0) {
                Py_XDECREF(made);
                Py_DECREF(id);
                Py_DECREF(data);
                goto done;
            }
            Py_DECREF(made); /* the dict holds it */
            ref = made;
        }
        Py_DECREF(id);
        if (source == Py_None) Py_SETREF(source, Py_NewRef(ref));
        PyObject *aval = PyObject_GetAttr(data, s_aval); /* a Python property: may run other threads */
        Py_DECREF(data);
        if (aval == NULL) goto done;
        int bad = append_input(args, keys, Py_NewRef(ref), aval);
        Py_DECREF(aval);
        if (bad) goto done;
    }
    key = PyList_AsTuple(keys);
    if (key == NULL) goto done;
    found = PyDict_GetItemWithError(inferred, key);
    if (found != NULL) {
        Py_INCREF(found);
    } else {
        if (PyErr_Occurred()) goto done;
        found = PyObject_CallFunctionObjArgs(infer_missing, op, inputs, params, NULL);
        if (found == NULL || PyDict_SetItem(inferred, key, found) < 0) goto done;
    }
    if (!PyTuple_Check(found) || PyTuple_GET_SIZE(found) != 3) {
        PyErr_SetString(PyExc_TypeError, "bulk record: inferred entry must be (structs, avals, multi)");
        goto done;
    }
    PyObject *structs = PyTuple_GET_ITEM(found, 0), *avals = PyTuple_GET_ITEM(found, 1);
    PyObject *multi = PyTuple_GET_ITEM(found, 2);
    handles = SGET(segment, S_HANDLES);
    if (handles == NULL) goto done;
    if (!PyList_Check(handles) || !PyTuple_Check(structs) || !PyTuple_Check(avals)) {
        PyErr_SetString(PyExc_TypeError, "bulk record: unexpected segment or inferred entry");
        goto done;
    }
    int is_multi = PyObject_IsTrue(multi);
    if (is_multi < 0) goto done;
    int out_fast = PyType_IsSubtype(out_cls, (PyTypeObject *)array_type) && array_fast(out_cls);
    if (is_multi) {
        Py_ssize_t m = PyTuple_GET_SIZE(structs);
        out = PyTuple_New(m);
        if (out == NULL) goto done;
        for (Py_ssize_t j = 0; j < m; j++) {
            PyObject *o = make_output(segment, handles, PyTuple_GET_ITEM(structs, j), PyTuple_GET_ITEM(avals, j),
                                      source, out_cls, out_fast);
            if (o == NULL) goto done;
            PyTuple_SET_ITEM(out, j, o);
        }
    } else {
        out = make_output(segment, handles, PyTuple_GET_ITEM(structs, 0), PyTuple_GET_ITEM(avals, 0), source,
                          out_cls, out_fast);
        if (out == NULL) goto done;
    }
    args_tuple = PyList_AsTuple(args);
    if (args_tuple == NULL) goto done;
    node = PyTuple_Pack(5, op, fn, params, args_tuple, multi);
    nodes = node ? SGET(segment, S_NODES) : NULL;
    if (nodes == NULL || PyList_Append(nodes, node) < 0) goto done;
    cap = SGET(segment, S_CAP);
    if (cap == NULL) goto done;
    Py_ssize_t limit = PyLong_AsSsize_t(cap);
    if (limit == -1 && PyErr_Occurred()) goto done;
    *full = PyList_GET_SIZE(nodes) >= limit;
    result = out;
    out = NULL;
done:
    Py_XDECREF(args);
    Py_XDECREF(keys);
    Py_XDECREF(source);
    Py_XDECREF(leaf_refs);
    Py_XDECREF(leaves);
    Py_XDECREF(handles);
    Py_XDECREF(nodes);
    Py_XDECREF(key);
    Py_XDECREF(found);
    Py_XDECREF(out);
    Py_XDECREF(node);
    Py_XDECREF(args_tuple);
    Py_XDECREF(cap);
    return result;
}

/* record() on a tuple of inputs: the lock taken around record_locked, the segment run when full. */
static PyObject *record_tuple(PyObject *segment, PyObject *op, PyObject *fn, PyObject *tuple, PyObject *params,
                              PyTypeObject *out_cls) {
    int segment_fast = segment_slots && (PyObject *)Py_TYPE(segment) == segment_type;
    PyObject *lock = SGET(segment, S_LOCK);
    if (lock == NULL) return NULL;
    PyObject *got = PyObject_CallMethodNoArgs(lock, s_acquire);
    if (got == NULL) {
        Py_DECREF(lock);
        return NULL;
    }
    Py_DECREF(got);
    int full = 0;
    PyObject *result = record_locked(segment, segment_fast, op, fn, tuple, params, out_cls, &full);
    PyObject *type, *value, *traceback; /* the failure, if any, kept across the release */
    PyErr_Fetch(&type, &value, &traceback);
    PyObject *released = PyObject_CallMethodNoArgs(lock, s_release);
    Py_DECREF(lock);
    if (released == NULL) {
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(traceback);
        Py_XDECREF(result);
        return NULL;
    }
    Py_DECREF(released);
    if (type != NULL) {
        PyErr_Restore(type, value, traceback);
        Py_XDECREF(result);
        return NULL;
    }
    if (full) {
        PyObject *ran = PyObject_CallMethodNoArgs(segment, s_run);
        if (ran == NULL) {
            Py_DECREF(result);
            return NULL;
        }
        Py_DECREF(ran);
    }
    return result;
}

static PyObject *record(PyObject *self, PyObject *const *argv, Py_ssize_t argc) {
    if (argc != 6) {
        PyErr_SetString(PyExc_TypeError, "record(segment, op, fn, inputs, params, out_cls) takes 6 arguments");
        return NULL;
    }
    if (!configured()) return NULL;
    PyObject *out_cls = argv[5];
    if (!PyType_Check(out_cls)) {
        PyErr_SetString(PyExc_TypeError, "record: out_cls must be a class");
        return NULL;
    }
    PyObject *tuple = PySequence_Tuple(argv[3]);
    if (tuple == NULL) return NULL;
    PyObject *result = record_tuple(argv[0], argv[1], argv[2], tuple, argv[4], (PyTypeObject *)out_cls);
    Py_DECREF(tuple);
    return result;
}

/* ------------------------------------------------------------------------------ operator methods
 *
 * An array's Python operators (``x * 2``, ``x + y``, ``-x``) as one C call: what
 * ``_array_operators``' method, ``_invoke.invoke`` and ``invoke_eager`` do for the common case --
 * an array and a Python float or int, or two arrays, no profiler hook, no autograd or deferred
 * compute handler, bulk execution on, the op's parameterless callable compiled -- recorded straight
 * into the thread's segment.  Every other case, and an op the segment cannot take, calls the
 * Python method (``fallback``), which stays the reference.  The type is a method descriptor
 * (Py_TPFLAGS_METHOD_DESCRIPTOR): the interpreter calls it with the array first, binding nothing.
 */
static PyObject *handler_var, *hook_globals, *bulk_settings, *bulk_local;
static PyObject *s_profile_hook, *s_enabled, *s_bound, *s_pure, *s_name, *s_qualname, *s_doc;
static int methods_on;
/* autograd's recorder (its handler object), the tape recorder's module globals (``_native``: the
 * tape's C recorder while in use) and autograd's table of ops with bound parameters */
static PyObject *tape_handler, *tape_globals, *tape_bound;
static PyObject *s_native, *s_adopting, *s_differentiable, *s_check, *s_dynamic_shape, *s_compute, *s_opname;

typedef struct {
    PyObject_HEAD
    PyObject *op, *fallback;
    int arity, reflected;
    vectorcallfunc vectorcall;
} OpMethod;

/* The segment of this thread when the fast path may record (a new reference), else NULL with no
 * exception set.  ``*taped`` is set when autograd is recording (its handler is installed): the op
 * then goes to the tape if an input is tracked, else into the segment as without a handler. */
static PyObject *fast_segment(int *taped) {
    *taped = 0;
    if (!methods_on || handler_var == NULL) return NULL;
    PyObject *hook = PyDict_GetItemWithError(hook_globals, s_profile_hook); /* borrowed */
    if (hook != NULL && hook != Py_None) return NULL;
    PyObject *handler = NULL;
    if (PyContextVar_Get(handler_var, NULL, &handler) < 0) goto clear;
    if (handler != NULL && handler != Py_None) {
        int ours = tape_handler != NULL && handler == tape_handler;
        Py_DECREF(handler);
        if (!ours) return NULL;
        *taped = 1;
    } else {
        Py_XDECREF(handler);
    }
    PyObject *enabled = PyDict_GetItemWithError(bulk_settings, s_enabled); /* borrowed */
    if (enabled != Py_True) goto clear;
    PyObject *segment = PyObject_GetAttr(bulk_local, s_segment); /* none yet: the Python path makes it */
    if (segment == NULL || (PyObject *)Py_TYPE(segment) != segment_type) {
        Py_XDECREF(segment);
        goto clear;
    }
    return segment;
clear:
    PyErr_Clear();
    return NULL;
}

/* The op's compiled callable for the parameters keyed ``bind_key`` (``OpDef.bind``'s cache key), if
 * it was compiled and can be recorded (a new reference), else NULL with no exception set. */
static PyObject *fast_callable(PyObject *op, PyObject *bind_key) {
    PyObject *bound = PyObject_GetAttr(op, s_bound);
    if (bound == NULL || !PyDict_Check(bound)) {
        Py_XDECREF(bound);
        PyErr_Clear();
        return NULL;
    }
    PyObject *fn = PyDict_GetItemWithError(bound, bind_key); /* borrowed */
    Py_XINCREF(fn);
    Py_DECREF(bound);
    if (fn == NULL) {
        PyErr_Clear();
        return NULL;
    }
    PyObject *pure = PyObject_GetAttr(fn, s_pure);
    if (pure == NULL || pure == Py_None) {
        Py_XDECREF(pure);
        Py_DECREF(fn);
        PyErr_Clear();
        return NULL;
    }
    Py_DECREF(pure);
    return fn;
}

/* Whether an input is an array autograd tracks (``_ag`` set): 1, 0, or -1 (an error). */
static int any_tracked(PyObject *inputs) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(inputs); i++) {
        PyObject *x = PyTuple_GET_ITEM(inputs, i);
        if (!PyObject_TypeCheck(x, (PyTypeObject *)array_type)) continue;
        PyObject *ag = AGET(x, array_fast(Py_TYPE(x)), A_AG);
        if (ag == NULL) return -1;
        int tracked = ag != Py_None;
        Py_DECREF(ag);
        if (tracked) return 1;
    }
    return 0;
}

/* The truth of ``op``'s attribute ``name``: 1, 0, or -1 (an error). */
static int op_flag(PyObject *op, PyObject *name) {
    PyObject *value = PyObject_GetAttr(op, name);
    int truth = value ? PyObject_IsTrue(value) : -1;
    Py_XDECREF(value);
    return truth;
}

/* What autograd's recorder (``autograd._Recorder.invoke``) does for a differentiable op without a
 * host-side check or dynamic shapes whose node the tape's C recorder can take: its deferred
 * node's output(s), NULL on an error, or Py_None (a new reference) for the Python path. */
static PyObject *fast_tape(PyObject *op, PyObject *inputs, PyObject *bind_key, PyTypeObject *out_cls) {
    PyObject *native = tape_globals ? PyDict_GetItemWithError(tape_globals, s_native) : NULL; /* borrowed */
    if (native == NULL || native == Py_None || op_flag(op, s_differentiable) != 1 || op_flag(op, s_check) != 0 ||
        op_flag(op, s_dynamic_shape) != 0)
        goto python;
    Py_INCREF(native); /* (held across the call: switching recorders rebinds the global) */
    PyObject *key = PyTuple_Pack(2, op, bind_key), *fn = NULL;
    if (key != NULL) {
        if (PyTuple_GET_SIZE(bind_key) == 0) {
            fn = PyObject_GetAttr(op, s_compute);
        } else {
            fn = PyDict_GetItemWithError(tape_bound, key); /* borrowed; none yet: Python binds it */
            Py_XINCREF(fn);
        }
    }
    PyObject *name = fn ? PyObject_GetAttr(op, s_opname) : NULL;
    PyObject *result = NULL;
    if (name != NULL) {
        PyObject *args[7] = {key, fn, inputs, (PyObject *)out_cls, name, Py_True, Py_True};
        result = PyObject_Vectorcall(native, args, 7, NULL);
        if (result == Py_NotImplemented) { /* an input of this thread's bulk segment: the tape takes it in */
            PyObject *adopting = PyDict_GetItemWithError(tape_globals, s_adopting); /* borrowed */
            if (adopting != NULL) {
                Py_INCREF(adopting); /* (held across the call, as ``native``) */
                Py_DECREF(result);
                result = PyObject_Vectorcall(adopting, args, 7, NULL);
                Py_DECREF(adopting);
            }
        }
    }
    Py_XDECREF(name);
    Py_XDECREF(fn);
    Py_XDECREF(key);
    Py_DECREF(native);
    if (result == Py_NotImplemented) {
        Py_DECREF(result);
        goto python;
    }
    if (result != NULL || name != NULL) return result; /* the node, or the recorder's error */
python:
    PyErr_Clear();
    Py_RETURN_NONE;
}

/* ``op`` on ``inputs`` (a tuple) recorded when nothing asks for the Python path: the output(s), NULL
 * on an error, or Py_None (a new reference) where the caller must take the Python path. */
static PyObject *fast_record_inputs(PyObject *op, PyObject *inputs, PyObject *params, PyObject *bind_key,
                                    PyTypeObject *out_cls) {
    int taped;
    PyObject *segment = fast_segment(&taped), *fn = NULL;
    if (segment == NULL) Py_RETURN_NONE;
    if (taped) {
        int tracked = any_tracked(inputs);
        if (tracked != 0) {
            Py_DECREF(segment);
            if (tracked < 0) PyErr_Clear();
            return tracked > 0 ? fast_tape(op, inputs, bind_key, out_cls) : Py_NewRef(Py_None);
        }
    }
    PyObject *result = Py_NewRef(Py_None);
    if ((fn = fast_callable(op, bind_key)) != NULL)
        Py_SETREF(result, record_tuple(segment, op, fn, inputs, params, out_cls));
    Py_XDECREF(fn);
    Py_DECREF(segment);
    return result;
}

/* The recorded output(s), NULL on an error, or Py_None where the Python method must run. */
static PyObject *fast_record(OpMethod *m, PyObject *const *args) {
    PyObject *self = args[0];
    if (!PyObject_TypeCheck(self, (PyTypeObject *)array_type)) Py_RETURN_NONE;
    PyObject *inputs;
    if (m->arity == 2) {
        PyObject *other = args[1];
        if (!(PyFloat_CheckExact(other) || PyLong_CheckExact(other) ||
              PyObject_TypeCheck(other, (PyTypeObject *)array_type)))
            Py_RETURN_NONE;
        inputs = m->reflected ? PyTuple_Pack(2, other, self) : PyTuple_Pack(2, self, other);
    } else {
        inputs = PyTuple_Pack(1, self);
    }
    if (inputs == NULL) return NULL;
    PyObject *result = fast_record_inputs(m->op, inputs, Py_None, empty_tuple, Py_TYPE(self));
    Py_DECREF(inputs);
    return result;
}

static PyObject *op_method_call(OpMethod *m, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    if (kwnames == NULL && PyVectorcall_NARGS(nargsf) == m->arity && array_type != NULL) {
        PyObject *result = fast_record(m, args);
        if (result != Py_None) return result;
        Py_DECREF(result);
    }
    return PyObject_Vectorcall(m->fallback, args, nargsf, kwnames);
}

static PyObject *op_method_get(PyObject *self, PyObject *obj, PyObject *type) {
    if (obj == NULL || obj == Py_None) return Py_NewRef(self);
    return PyMethod_New(self, obj);
}

static void op_method_dealloc(OpMethod *m) {
    Py_XDECREF(m->op);
    Py_XDECREF(m->fallback);
    Py_TYPE(m)->tp_free((PyObject *)m);
}

static PyObject *op_method_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    PyObject *op, *fallback;
    int arity, reflected = 0;
    static char *names[] = {"op", "fallback", "arity", "reflected", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOi|p:OpMethod", names, &op, &fallback, &arity, &reflected))
        return NULL;
    if (!PyCallable_Check(fallback) || (arity != 1 && arity != 2) || (reflected && arity != 2)) {
        PyErr_SetString(PyExc_TypeError, "OpMethod(op, fallback, arity, reflected): a callable, arity 1 or 2, "
                                         "reflected only for arity 2");
        return NULL;
    }
    OpMethod *m = (OpMethod *)type->tp_alloc(type, 0);
    if (m == NULL) return NULL;
    m->op = Py_NewRef(op);
    m->fallback = Py_NewRef(fallback);
    m->arity = arity;
    m->reflected = reflected;
    m->vectorcall = (vectorcallfunc)op_method_call;
    return (PyObject *)m;
}

/* __name__, __qualname__, __doc__ and __wrapped__ are the Python method's (inspect, help and
 * Sphinx see that function). */
static PyObject *op_method_attr(OpMethod *m, void *name) {
    return PyObject_GetAttr(m->fallback, *(PyObject **)name);
}

static PyObject *op_method_wrapped(OpMethod *m, void *closure) { return Py_NewRef(m->fallback); }

static PyGetSetDef op_method_getset[] = {
    {"__name__", (getter)op_method_attr, NULL, NULL, &s_name},
    {"__qualname__", (getter)op_method_attr, NULL, NULL, &s_qualname},
    {"__doc__", (getter)op_method_attr, NULL, NULL, &s_doc},
    {"__wrapped__", (getter)op_method_wrapped, NULL, "the Python method this one stands for", NULL},
    {NULL},
};

static PyObject *op_method_repr(OpMethod *m) { return PyUnicode_FromFormat("<operator method %R>", m->fallback); }

static PyTypeObject OpMethodType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "mxjax.graph._record.OpMethod",
    .tp_basicsize = sizeof(OpMethod),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_doc = "OpMethod(op, fallback, arity, reflected=False): an array operator recorded in C, else ``fallback``.",
    .tp_new = op_method_new,
    .tp_dealloc = (destructor)op_method_dealloc,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(OpMethod, vectorcall),
    .tp_descr_get = op_method_get,
    .tp_getset = op_method_getset,
    .tp_repr = (reprfunc)op_method_repr,
};

static PyObject *try_record(PyObject *self, PyObject *const *argv, Py_ssize_t argc) {
    if (argc != 5) {
        PyErr_SetString(PyExc_TypeError, "try_record(op, inputs, params, bind_key, out_cls) takes 5 arguments");
        return NULL;
    }
    if (array_type == NULL || !PyTuple_Check(argv[1]) || !PyTuple_Check(argv[3]) || !PyType_Check(argv[4]))
        Py_RETURN_NONE;
    return fast_record_inputs(argv[0], argv[1], argv[2], argv[3], (PyTypeObject *)argv[4]);
}

static PyObject *configure_methods(PyObject *self, PyObject *args) {
    PyObject *var, *globals, *settings, *local;
    if (!PyArg_ParseTuple(args, "OO!O!O:configure_methods", &var, &PyDict_Type, &globals, &PyDict_Type, &settings,
                          &local))
        return NULL;
    if (!PyContextVar_CheckExact(var)) {
        PyErr_SetString(PyExc_TypeError, "configure_methods: the handler must be a ContextVar");
        return NULL;
    }
    Py_INCREF(var); Py_XSETREF(handler_var, var);
    Py_INCREF(globals); Py_XSETREF(hook_globals, globals);
    Py_INCREF(settings); Py_XSETREF(bulk_settings, settings);
    Py_INCREF(local); Py_XSETREF(bulk_local, local);
    Py_RETURN_NONE;
}

static PyObject *configure_tape(PyObject *self, PyObject *args) {
    PyObject *handler, *globals, *bound;
    if (!PyArg_ParseTuple(args, "OO!O!:configure_tape", &handler, &PyDict_Type, &globals, &PyDict_Type, &bound))
        return NULL;
    Py_INCREF(handler); Py_XSETREF(tape_handler, handler);
    Py_INCREF(globals); Py_XSETREF(tape_globals, globals);
    Py_INCREF(bound); Py_XSETREF(tape_bound, bound);
    Py_RETURN_NONE;
}

static PyObject *use_methods(PyObject *self, PyObject *flag) {
    int on = PyObject_IsTrue(flag);
    if (on < 0) return NULL;
    methods_on = on;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"configure", configure, METH_VARARGS,
     "configure(array_type, pending_type, segment_type, arrayimpl_type, inferred, infer_missing, host_type, host_leaf): "
     "the classes record works with, graph.bulk's table of inferred outputs and the function that fills a missing "
     "entry, and NumPy's array class with the function that makes one such input a leaf: (data, aval), or None "
     "where the op must run now."},
    {"record", (PyCFunction)(void (*)(void))record, METH_FASTCALL,
     "record(segment, op, fn, inputs, params, out_cls): graph.bulk.record, in C."},
    {"configure_methods", configure_methods, METH_VARARGS,
     "configure_methods(handler_var, invoke_globals, settings, local): what OpMethod checks before recording: "
     "invoke's handler variable and module globals (its profiler hook), bulk execution's settings and its "
     "thread-local segment."},
    {"try_record", (PyCFunction)(void (*)(void))try_record, METH_FASTCALL,
     "try_record(op, inputs, params, bind_key, out_cls): what OpMethod does for an op called with "
     "``params`` (``bind_key``: OpDef.bind's key for them) on the tuple ``inputs``: the recorded output(s), or None "
     "where the caller must take the Python path (invoke)."},
    {"configure_tape", configure_tape, METH_VARARGS,
     "configure_tape(handler, recording_globals, bound): autograd's recorder, whose ops OpMethod and try_record "
     "send to the tape's C recorder (``_native`` in the tape recorder's module globals, while in use), and "
     "autograd's table of (op, parameters) -> bound compute function."},
    {"use_methods", use_methods, METH_O, "use_methods(flag): whether OpMethod records (else it always falls back)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "mxjax.graph._record",
                                    "graph.bulk's per-op recorder, in C.", -1, methods};

PyMODINIT_FUNC PyInit__record(void) {
    static const interned_name names[] = {
        {&s_lock, "lock"}, {&s_acquire, "acquire"}, {&s_release, "release"}, {&s_leaf_refs, "leaf_refs"},
        {&s_leaves, "leaves"}, {&s_handles, "handles"}, {&s_nodes, "nodes"}, {&s_cap, "cap"}, {&s_run, "run"},
        {&s_var, "_var"}, {&s_data, "_data"}, {&s_ag, "_ag"}, {&s_dc, "_dc"}, {&s_segment, "segment"},
        {&s_index, "index"}, {&s_aval, "aval"}, {&s_value, "value"}, {&s_error, "error"}, {&s_owner, "owner"},
        {&s_sharers, "sharers"}, {&s_source, "source"}, {&s_profile_hook, "_profile_hook"},
        {&s_enabled, "enabled"}, {&s_bound, "_bound"}, {&s_pure, "pure"}, {&s_name, "__name__"},
        {&s_qualname, "__qualname__"}, {&s_doc, "__doc__"}, {&s_native, "_native"},
        {&s_adopting, "native_adopting"},
        {&s_differentiable, "differentiable"}, {&s_check, "check"}, {&s_dynamic_shape, "dynamic_shape"},
        {&s_compute, "compute"}, {&s_opname, "name"},
    };
    if (intern_names(names, sizeof(names) / sizeof(names[0])) < 0) return NULL;
    empty_tuple = PyTuple_New(0);
    if (empty_tuple == NULL) return NULL;
    if (PyType_Ready(&OpMethodType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    if (PyModule_AddObjectRef(m, "OpMethod", (PyObject *)&OpMethodType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
