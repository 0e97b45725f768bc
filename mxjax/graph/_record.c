/* graph.bulk's recorder in C: appends one imperative op to a thread's bulk segment.
 *
 * Exactly the logic of graph/bulk.py's ``record`` (which stays, and runs where this extension was
 * not built): the Python version costs ~1.3 us per op, this one a fraction of that, which is
 * what lets a chain of small imperative ops keep up with eager frameworks.  The segment's lock
 * is held while the segment changes, as in Python: reading a leaf's ``aval`` or inferring a new
 * op's outputs runs Python code, during which another thread may try to run this segment.
 */
#include "_slots.h"

static PyObject *array_type, *pending_type, *arrayimpl_type, *inferred, *infer_missing;
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
    PyObject *a, *p, *seg, *impl, *inf, *missing;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!O:configure", &PyType_Type, &a, &PyType_Type, &p, &PyType_Type, &seg,
                          &PyType_Type, &impl, &PyDict_Type, &inf, &missing))
        return NULL;
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

static PyObject *record(PyObject *self, PyObject *const *argv, Py_ssize_t argc) {
    if (argc != 6) {
        PyErr_SetString(PyExc_TypeError, "record(segment, op, fn, inputs, params, out_cls) takes 6 arguments");
        return NULL;
    }
    if (!configured()) return NULL;
    PyObject *segment = argv[0], *inputs = argv[3], *out_cls = argv[5];
    if (!PyType_Check(out_cls)) {
        PyErr_SetString(PyExc_TypeError, "record: out_cls must be a class");
        return NULL;
    }
    PyObject *tuple = PySequence_Tuple(inputs);
    if (tuple == NULL) return NULL;
    int segment_fast = segment_slots && (PyObject *)Py_TYPE(segment) == segment_type;
    PyObject *lock = SGET(segment, S_LOCK);
    if (lock == NULL) {
        Py_DECREF(tuple);
        return NULL;
    }
    PyObject *got = PyObject_CallMethodNoArgs(lock, s_acquire);
    if (got == NULL) {
        Py_DECREF(lock);
        Py_DECREF(tuple);
        return NULL;
    }
    Py_DECREF(got);
    int full = 0;
    PyObject *result = record_locked(segment, segment_fast, argv[1], argv[2], tuple, argv[4], (PyTypeObject *)out_cls,
                                     &full);
    PyObject *type, *value, *traceback; /* the failure, if any, kept across the release */
    PyErr_Fetch(&type, &value, &traceback);
    PyObject *released = PyObject_CallMethodNoArgs(lock, s_release);
    Py_DECREF(lock);
    Py_DECREF(tuple);
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

static PyMethodDef methods[] = {
    {"configure", configure, METH_VARARGS,
     "configure(array_type, pending_type, segment_type, arrayimpl_type, inferred, infer_missing): the classes record "
     "works with, graph.bulk's table of inferred outputs and the function that fills a missing entry."},
    {"record", (PyCFunction)(void (*)(void))record, METH_FASTCALL,
     "record(segment, op, fn, inputs, params, out_cls): graph.bulk.record, in C."},
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
        {&s_sharers, "sharers"}, {&s_source, "source"},
    };
    if (intern_names(names, sizeof(names) / sizeof(names[0])) < 0) return NULL;
    empty_tuple = PyTuple_New(0);
    if (empty_tuple == NULL) return NULL;
    return PyModule_Create(&module);
}
