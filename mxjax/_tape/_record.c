/* The tape's recorder in C: records an op under autograd as a deferred node (_tape/recording.py).
 *
 * Exactly the logic of recording.py's ``record`` where it defers the node and its outputs' avals
 * are known (``_record_deferred`` with a SHAPE_CACHE hit), with ``_alias`` and ``Plan.add``
 * (which stay in Python and run everywhere else: an op that runs now, a first sighting of its
 * input avals, differentiated integers).  Those cases are found before anything changes (but
 * reading inputs that Python reads too), and then ``record`` returns NotImplemented for the
 * Python recorder to do the work.  The Python version costs 5-7 us per recorded op, this one about a microsecond:
 * a training step records every op of its loss this way.
 */
#include "../graph/_slots.h"

static PyObject *array_type, *node_type, *pending_type, *plan_type, *leaf_type, *shape_cache, *inexact_table,
    *lazy_input, *aval_key, *sequence, *thread_local, *tape_lock, *array_classes, *empty_tuple;

/* Slots, read and written at their offsets; configure() checks that every one is a plain object
 * slot, else the recorder stays off (``ready`` is 0). */
static PyObject *s_data, *s_var, *s_ag, *s_dc, *s_key, *s_fn, *s_inputs, *s_entries, *s_diff, *s_vjp,
    *s_out_avals, *s_multi, *s_seq, *s_name, *s_custom, *s_dynamic, *s_fused, *s_region, *s_ints, *s_segment,
    *s_index, *s_aval, *s_value, *s_error, *s_owner, *s_sharers, *s_source;
enum { A_DATA, A_VAR, A_AG, A_DC, A_COUNT };
static PyObject **array_names[A_COUNT] = {&s_data, &s_var, &s_ag, &s_dc};
enum { N_KEY, N_FN, N_INPUTS, N_ENTRIES, N_DIFF, N_VJP, N_OUT_AVALS, N_MULTI, N_SEQ, N_NAME, N_CUSTOM, N_DYNAMIC,
       N_FUSED, N_REGION, N_INTS, N_COUNT };
static PyObject **node_names[N_COUNT] = {&s_key, &s_fn, &s_inputs, &s_entries, &s_diff, &s_vjp, &s_out_avals,
                                         &s_multi, &s_seq, &s_name, &s_custom, &s_dynamic, &s_fused, &s_region,
                                         &s_ints};
enum { P_SEGMENT, P_INDEX, P_AVAL, P_VALUE, P_ERROR, P_OWNER, P_SHARERS, P_SOURCE, P_COUNT };
static PyObject **pending_names[P_COUNT] = {&s_segment, &s_index, &s_aval, &s_value, &s_error, &s_owner, &s_sharers,
                                            &s_source};
static Py_ssize_t array_offsets[A_COUNT], node_offsets[N_COUNT], pending_offsets[P_COUNT];
static PyObject *array_descrs[A_COUNT];
static int ready;
static Py_ssize_t region_cap; /* Plan.CAP */

/* Plan's attributes (an ordinary class: through getattr/setattr). */
static PyObject *s_producer, *s_handles, *s_ext_values, *s_internal, *s_target_index, *s_targets, *s_target_slots,
    *s_leaf_targets, *s_ops, *s_diff_positions, *s_refs, *s_node_wiring, *s_starts, *s_dtype, *s_shape, *s_to_jax,
    *s_open, *s_acquire, *s_release;

#define SLOT(obj, offset) (*(PyObject **)((char *)(obj) + (offset)))

/* Whether objects of ``cls`` are arrays that keep the array class's slots. */
static int array_fast(PyTypeObject *cls) {
    return keeps_slots(cls, PyType_IsSubtype(cls, (PyTypeObject *)array_type), array_names, array_descrs, A_COUNT,
                       array_classes);
}

/* A slot's value (borrowed; NULL if unset, which the callers treat as "not this recorder's case"). */
static inline PyObject *get(PyObject *obj, Py_ssize_t offset) { return SLOT(obj, offset); }

/* Sets a slot, stealing ``value``. */
static inline void put(PyObject *obj, Py_ssize_t offset, PyObject *value) {
    PyObject *old = SLOT(obj, offset);
    SLOT(obj, offset) = value;
    Py_XDECREF(old);
}

static PyObject *configure(PyObject *self, PyObject *args) {
    PyObject *a, *node, *pending, *plan, *leaf, *cache, *table, *marker, *key_fn, *counter, *local, *lock;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!O!O!OOOOO:configure", &PyType_Type, &a, &PyType_Type, &node, &PyType_Type,
                          &pending, &PyType_Type, &plan, &PyType_Type, &leaf, &PyDict_Type, &cache, &PyDict_Type,
                          &table, &marker, &key_fn, &counter, &local, &lock))
        return NULL;
    PyObject **targets[] = {&array_type, &node_type, &pending_type, &plan_type, &leaf_type, &shape_cache,
                            &inexact_table, &lazy_input, &aval_key, &sequence, &thread_local, &tape_lock};
    PyObject *values[] = {a, node, pending, plan, leaf, cache, table, marker, key_fn, counter, local, lock};
    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
        Py_INCREF(values[i]);
        Py_XSETREF(*targets[i], values[i]);
    }
    PyObject *cap = PyObject_GetAttrString(plan, "CAP");
    region_cap = cap ? PyLong_AsSsize_t(cap) : -1;
    Py_XDECREF(cap);
    if (region_cap < 1) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "tape record: Plan.CAP must be positive");
        return NULL;
    }
    ready = 1;
    for (int i = 0; i < A_COUNT; i++) ready &= (array_offsets[i] = slot_of(a, *array_names[i], &array_descrs[i])) >= 0;
    for (int i = 0; i < N_COUNT; i++) ready &= (node_offsets[i] = slot_of(node, *node_names[i], NULL)) >= 0;
    for (int i = 0; i < P_COUNT; i++) ready &= (pending_offsets[i] = slot_of(pending, *pending_names[i], NULL)) >= 0;
    Py_XSETREF(array_classes, PyDict_New());
    if (array_classes == NULL) return NULL;
    return PyBool_FromLong(ready);
}

/* Whether ``var`` is a lazy value of ``region`` (an output of one of its deferred nodes). */
static int in_region(PyObject *var, PyObject *region) {
    return Py_TYPE(var) == (PyTypeObject *)pending_type && get(var, pending_offsets[P_SEGMENT]) == region;
}

/* Plan.add(plan, node, datas, sig, repeat) for a node recorded now: wire its inputs in after the plan's nodes. */
static int plan_add(PyObject *plan, PyObject *node, PyObject *datas, PyObject *sig, PyObject *repeat) {
    int ok = -1;
    PyObject *producer = PyObject_GetAttr(plan, s_producer);
    PyObject *ext_values = PyObject_GetAttr(plan, s_ext_values), *internal = PyObject_GetAttr(plan, s_internal);
    PyObject *refs = PyObject_GetAttr(plan, s_refs), *wiring = PyObject_GetAttr(plan, s_node_wiring);
    PyObject *starts = PyObject_GetAttr(plan, s_starts), *ops = PyObject_GetAttr(plan, s_ops);
    PyObject *target_index = NULL, *targets = NULL, *target_slots = NULL, *diff_positions = NULL, *slots = NULL;
    if (producer == NULL || ext_values == NULL || internal == NULL || refs == NULL || wiring == NULL ||
        starts == NULL || ops == NULL)
        goto done;
    if (!PyList_Check(producer) || !PyList_Check(ext_values) || !PyList_Check(internal) ||
        !PyList_Check(refs) || !PyList_Check(wiring) || !PyList_Check(starts) || !PyList_Check(ops) ||
        PyList_GET_SIZE(starts) != PyList_GET_SIZE(refs) + 1) {
        PyErr_SetString(PyExc_TypeError, "tape record: unexpected Plan attributes");
        goto done;
    }
    PyObject *inputs = get(node, node_offsets[N_INPUTS]);
    PyObject *entries = get(node, node_offsets[N_ENTRIES]);
    Py_ssize_t n = PyTuple_GET_SIZE(datas);
    slots = PyTuple_New(n);
    if (slots == NULL) goto done;
    for (Py_ssize_t s = 0; s < n; s++) {
        PyObject *data = PyTuple_GET_ITEM(datas, s), *x = PyTuple_GET_ITEM(inputs, s), *held = NULL;
        if (data == lazy_input) {
            PyObject *var = get(x, array_offsets[A_VAR]);
            if (var != NULL && in_region(var, plan)) { /* an output of this region: its position */
                PyObject *slot = get(var, pending_offsets[P_INDEX]);
                Py_ssize_t at = PyLong_AsSsize_t(slot);
                if (at < 0 || at >= PyList_GET_SIZE(producer)) {
                    if (!PyErr_Occurred()) PyErr_SetString(PyExc_IndexError, "tape record: bad output position");
                    goto done;
                }
                PyTuple_SET_ITEM(slots, s, Py_NewRef(slot));
                if (PyList_Append(internal, slot) < 0) goto done;
                continue;
            }
            held = PyObject_CallMethodNoArgs(x, s_to_jax); /* run since (its region closed meanwhile) */
            if (held == NULL) goto done;
            data = held;
        }
        PyObject *entry = PyTuple_GET_ITEM(entries, s);
        if (entry != Py_None) { /* differentiated: a gradient leaves the region here */
            if (target_index == NULL) {
                target_index = PyObject_GetAttr(plan, s_target_index);
                targets = target_index ? PyObject_GetAttr(plan, s_targets) : NULL;
                target_slots = targets ? PyObject_GetAttr(plan, s_target_slots) : NULL;
                diff_positions = target_slots ? PyObject_GetAttr(plan, s_diff_positions) : NULL;
                if (diff_positions == NULL) goto fail_held;
                if (!PyDict_Check(target_index) || !PyList_Check(targets) || !PyList_Check(target_slots) ||
                    !PyList_Check(diff_positions)) {
                    PyErr_SetString(PyExc_TypeError, "tape record: unexpected Plan attributes");
                    goto fail_held;
                }
            }
            int leaf = Py_TYPE(entry) == (PyTypeObject *)leaf_type;
            if (!leaf && !(PyTuple_Check(entry) && PyTuple_GET_SIZE(entry) == 2)) {
                PyErr_SetString(PyExc_TypeError, "tape record: an autograd entry is a Leaf or (node, index)");
                goto fail_held;
            }
            PyObject *key = leaf ? PyLong_FromVoidPtr(entry) : NULL;
            if (!leaf) {
                PyObject *id = PyLong_FromVoidPtr(PyTuple_GET_ITEM(entry, 0));
                key = id ? PyTuple_Pack(2, id, PyTuple_GET_ITEM(entry, 1)) : NULL;
                Py_XDECREF(id);
            }
            if (key == NULL) goto fail_held;
            PyObject *t = PyDict_GetItemWithError(target_index, key); /* borrowed */
            if (t == NULL) {
                if (PyErr_Occurred()) {
                    Py_DECREF(key);
                    goto fail_held;
                }
                PyObject *made = PyLong_FromSsize_t(PyList_GET_SIZE(targets));
                PyObject *empty = made ? PyList_New(0) : NULL;
                int bad = empty == NULL || PyDict_SetItem(target_index, key, made) < 0 ||
                          PyList_Append(targets, entry) < 0 || PyList_Append(target_slots, empty) < 0;
                Py_XDECREF(empty);
                Py_XDECREF(made);
                if (bad) {
                    Py_DECREF(key);
                    goto fail_held;
                }
                t = made; /* the dict holds it */
                if (!leaf && PyObject_SetAttr(plan, s_leaf_targets, Py_False) < 0) {
                    Py_DECREF(key);
                    goto fail_held;
                }
            }
            Py_DECREF(key);
            Py_ssize_t ti = PyLong_AsSsize_t(t);
            PyObject *count = PyLong_FromSsize_t(PyList_GET_SIZE(diff_positions));
            PyObject *where = PyLong_FromSsize_t(PyList_GET_SIZE(ext_values));
            int bad = count == NULL || where == NULL || ti < 0 || ti >= PyList_GET_SIZE(target_slots) ||
                      PyList_Append(PyList_GET_ITEM(target_slots, ti), count) < 0 ||
                      PyList_Append(diff_positions, where) < 0;
            Py_XDECREF(count);
            Py_XDECREF(where);
            if (bad) {
                if (!PyErr_Occurred()) PyErr_SetString(PyExc_IndexError, "tape record: bad target position");
                goto fail_held;
            }
        }
        {
            PyObject *slot = PyLong_FromSsize_t(-1 - PyList_GET_SIZE(ext_values)); /* a value from outside */
            if (slot == NULL || PyList_Append(ext_values, data) < 0) {
                Py_XDECREF(slot);
                goto fail_held;
            }
            PyTuple_SET_ITEM(slots, s, slot);
        }
        Py_XDECREF(held);
        continue;
    fail_held:
        Py_XDECREF(held);
        goto done;
    }
    {
        PyObject *position = PyLong_FromSsize_t(PyList_GET_SIZE(refs));
        PyObject *ref = position ? PyWeakref_NewRef(node, NULL) : NULL;
        Py_ssize_t start = PyLong_AsSsize_t(PyList_GET_ITEM(starts, PyList_GET_SIZE(starts) - 1));
        Py_ssize_t count = start < 0 ? -1 : PyObject_Size(get(node, node_offsets[N_OUT_AVALS]));
        PyObject *next = count < 0 ? NULL : PyLong_FromSsize_t(start + count);
        int bad = ref == NULL || next == NULL || PyList_Append(refs, ref) < 0 || PyList_Append(starts, next) < 0;
        for (Py_ssize_t j = 0; !bad && j < count; j++) bad = PyList_Append(producer, position) < 0;
        Py_XDECREF(position);
        Py_XDECREF(ref);
        Py_XDECREF(next);
        if (bad) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_IndexError, "tape record: bad output count");
            goto done;
        }
    }
    {
        PyObject *entry = PyTuple_Pack(4, get(node, node_offsets[N_KEY]), get(node, node_offsets[N_DIFF]),
                                       get(node, node_offsets[N_MULTI]), slots);
        PyObject *op = entry ? PyTuple_Pack(5, get(node, node_offsets[N_FN]), get(node, node_offsets[N_NAME]),
                                            sig, get(node, node_offsets[N_OUT_AVALS]), repeat) : NULL;
        int bad = op == NULL || PyList_Append(wiring, entry) < 0 || PyList_Append(ops, op) < 0;
        Py_XDECREF(entry);
        Py_XDECREF(op);
        if (bad) goto done;
    }
    if (PyList_GET_SIZE(refs) >= region_cap && PyObject_SetAttr(plan, s_open, Py_False) < 0) goto done; /* full */
    ok = 0;
done:
    Py_XDECREF(producer);
    Py_XDECREF(ext_values);
    Py_XDECREF(internal);
    Py_XDECREF(refs);
    Py_XDECREF(wiring);
    Py_XDECREF(starts);
    Py_XDECREF(ops);
    Py_XDECREF(target_index);
    Py_XDECREF(targets);
    Py_XDECREF(target_slots);
    Py_XDECREF(diff_positions);
    Py_XDECREF(slots);
    return ok;
}

/* The thread's open region (``recording.current_region``): a new reference, or NULL (with an error
 * set, or none when there is no open region). */
static PyObject *current_region(void) {
    PyObject *ref = PyObject_GetAttr(thread_local, s_region);
    if (ref == NULL) {
        if (PyErr_ExceptionMatches(PyExc_AttributeError)) PyErr_Clear();
        return NULL;
    }
    PyObject *region = NULL;
    if (PyWeakref_CheckRef(ref)) {
        PyObject *obj = PyWeakref_GetObject(ref); /* borrowed */
        if (obj != NULL && obj != Py_None) {
            PyObject *open = PyObject_GetAttr(obj, s_open);
            if (open == Py_True) region = Py_NewRef(obj);
            Py_XDECREF(open);
        }
    }
    Py_DECREF(ref);
    return region;
}

/* A new region, made the thread's (a new reference). */
static PyObject *new_region(void) {
    PyObject *region = PyObject_CallNoArgs(plan_type);
    PyObject *ref = region ? PyWeakref_NewRef(region, NULL) : NULL;
    if (ref == NULL || PyObject_SetAttr(thread_local, s_region, ref) < 0) Py_CLEAR(region);
    Py_XDECREF(ref);
    return region;
}

/* The tape's lock (``nodes.LOCK``), held while a node joins the thread's region: a read from another
 * thread runs the region under it, so a node joins before that run takes the region's nodes, or finds
 * the region closed and starts a new one -- never joins a region that already ran. */
static int lock_tape(void) {
    PyObject *r = PyObject_CallMethodNoArgs(tape_lock, s_acquire);
    Py_XDECREF(r);
    return r == NULL ? -1 : 0;
}

/* Releases it, keeping any exception set. */
static void unlock_tape(void) {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyObject *r = PyObject_CallMethodNoArgs(tape_lock, s_release);
    if (r == NULL) PyErr_WriteUnraisable(tape_lock);
    Py_XDECREF(r);
    PyErr_Restore(type, value, tb);
}

/* A new array of ``cls`` (its slots the array class's) with these slot values (borrowed). */
static PyObject *new_array(PyTypeObject *cls, PyObject *data, PyObject *var, PyObject *ag, PyObject *dc) {
    PyObject *array = PyBaseObject_Type.tp_new(cls, empty_tuple, NULL);
    if (array == NULL) return NULL;
    put(array, array_offsets[A_DATA], Py_NewRef(data));
    put(array, array_offsets[A_VAR], Py_NewRef(var));
    put(array, array_offsets[A_AG], Py_NewRef(ag));
    put(array, array_offsets[A_DC], Py_NewRef(dc));
    return array;
}

/* Output ``index`` of ``node``, just added to ``region`` where its outputs start at ``start``: an array of
 * ``cls`` holding ``struct``, its ``_var`` a new Pending of the region, a weak reference to which goes to
 * the region's ``handles`` (as recording._output). */
static PyObject *deferred_output(PyObject *node, Py_ssize_t index, PyObject *region, PyObject *handles,
                                 Py_ssize_t start, PyObject *structure, PyTypeObject *cls) {
    PyObject *i = PyLong_FromSsize_t(index);
    PyObject *entry = i ? PyTuple_Pack(2, node, i) : NULL;
    PyObject *position = entry ? PyLong_FromSsize_t(start + index) : NULL;
    PyObject *array = position ? new_array(cls, structure, Py_None, entry, Py_None) : NULL;
    PyObject *var = array ? PyBaseObject_Type.tp_new((PyTypeObject *)pending_type, empty_tuple, NULL) : NULL;
    PyObject *owner = var ? PyWeakref_NewRef(array, NULL) : NULL;
    PyObject *handle = owner ? PyWeakref_NewRef(var, NULL) : NULL;
    int bad = handle == NULL || PyList_Append(handles, handle) < 0;
    Py_XDECREF(i);
    Py_XDECREF(entry);
    Py_XDECREF(handle);
    if (bad) {
        Py_XDECREF(position);
        Py_XDECREF(array);
        Py_XDECREF(var);
        Py_XDECREF(owner);
        return NULL;
    }
    PyObject *values[P_COUNT] = {region, position, Py_None, Py_None, Py_None, owner, Py_None, Py_None};
    for (int k = 0; k < P_COUNT; k++) put(var, pending_offsets[k], Py_NewRef(values[k]));
    Py_DECREF(position);
    Py_DECREF(owner);
    put(array, array_offsets[A_VAR], var);
    return array;
}

/* record(key, fn, inputs, out_cls, name, defer, repeat): the deferred node's output(s), or
 * NotImplemented where the Python recorder must do the work (nothing was changed then). */
static PyObject *record(PyObject *self, PyObject *const *argv, Py_ssize_t argc) {
    if (argc != 7) {
        PyErr_SetString(PyExc_TypeError, "record(key, fn, inputs, out_cls, name, defer, repeat) takes 7 arguments");
        return NULL;
    }
    if (!ready) Py_RETURN_NOTIMPLEMENTED;
    PyObject *key = argv[0], *fn = argv[1], *out_cls = argv[3], *name = argv[4];
    int defer = PyObject_IsTrue(argv[5]), repeat = PyObject_IsTrue(argv[6]);
    if (defer < 0 || repeat < 0) return NULL;
    PyObject *inputs = PySequence_Tuple(argv[2]);
    if (inputs == NULL) return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(inputs);
    PyObject *result = NULL, *shape_key = NULL, *datas = NULL, *entries = NULL, *diff = NULL, *held = NULL;
    PyObject *node = NULL, *region = NULL, *diff_tuple = NULL, *seq = NULL;
    int lazy = 0, locked = 0;
    region = current_region(); /* a lazy input of this region is wired in; any other is read now */
    if (region == NULL && PyErr_Occurred()) goto done;
    shape_key = PyTuple_New(n + 1);
    datas = PyTuple_New(n);
    entries = PyTuple_New(n);
    diff = PyList_New(0);
    if (shape_key == NULL || datas == NULL || entries == NULL || diff == NULL) goto done;
    PyTuple_SET_ITEM(shape_key, 0, Py_NewRef(key));
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = PyTuple_GET_ITEM(inputs, i);
        PyTuple_SET_ITEM(entries, i, Py_NewRef(Py_None));
        if (!PyObject_TypeCheck(x, (PyTypeObject *)array_type)) {
            PyObject *aval = PyObject_CallOneArg(aval_key, x);
            if (aval == NULL) goto done;
            PyTuple_SET_ITEM(shape_key, i + 1, aval);
            PyTuple_SET_ITEM(datas, i, Py_NewRef(x));
            continue;
        }
        if (!array_fast(Py_TYPE(x))) goto fallback;
        PyObject *data = get(x, array_offsets[A_DATA]), *var = get(x, array_offsets[A_VAR]);
        PyObject *ag = get(x, array_offsets[A_AG]);
        if (data == NULL || var == NULL || ag == NULL) goto fallback;
        if (out_cls == Py_None) out_cls = (PyObject *)Py_TYPE(x);
        PyObject *dtype = PyObject_GetAttr(data, s_dtype);
        if (dtype == NULL) goto done;
        if (ag != Py_None) {
            PyObject *flag = PyDict_GetItemWithError(inexact_table, dtype); /* borrowed */
            if (flag == Py_True) {
                PyObject *position = PyLong_FromSsize_t(i);
                if (position == NULL || PyList_Append(diff, position) < 0) {
                    Py_XDECREF(position);
                    Py_DECREF(dtype);
                    goto done;
                }
                Py_DECREF(position);
                PyTuple_SET_ITEM(entries, i, Py_NewRef(ag));
                Py_DECREF(Py_None); /* the None it replaces */
            } else {
                /* an integer input: not differentiated when it is an output of a node that did not
                 * differentiate integers (int_tracked); anything else is the Python recorder's */
                int untracked = flag == Py_False && PyTuple_CheckExact(ag) && PyTuple_GET_SIZE(ag) == 2 &&
                                Py_TYPE(PyTuple_GET_ITEM(ag, 0)) == (PyTypeObject *)node_type &&
                                get(PyTuple_GET_ITEM(ag, 0), node_offsets[N_INTS]) == Py_False;
                if (!untracked) {
                    Py_DECREF(dtype);
                    if (PyErr_Occurred()) goto done;
                    goto fallback;
                }
            }
        }
        PyObject *shape = PyObject_GetAttr(data, s_shape);
        PyObject *aval = shape ? PyTuple_Pack(2, shape, dtype) : NULL;
        Py_XDECREF(shape);
        Py_DECREF(dtype);
        if (aval == NULL) goto done;
        PyTuple_SET_ITEM(shape_key, i + 1, aval);
        if (var == Py_None) {
            PyTuple_SET_ITEM(datas, i, Py_NewRef(data));
        } else if (region != NULL && in_region(var, region)) {
            lazy = 1;
            PyTuple_SET_ITEM(datas, i, Py_NewRef(lazy_input));
        } else if (defer && Py_TYPE(var) == (PyTypeObject *)pending_type &&
                   get(var, pending_offsets[P_VALUE]) == Py_None && get(var, pending_offsets[P_ERROR]) == Py_None) {
            goto fallback; /* a value of a bulk segment not run yet: Python may move the segment into the region */
        } else { /* lazy another way (computed since, engine work): its value now, as in Python */
            PyObject *value = PyObject_CallMethodNoArgs(x, s_to_jax); /* (data and var may be freed) */
            if (value == NULL) goto done;
            PyTuple_SET_ITEM(datas, i, value);
        }
    }
    if (!defer && !lazy) goto fallback; /* the node runs now */
    PyObject *found = PyDict_GetItemWithError(shape_cache, shape_key); /* borrowed */
    if (found == NULL) {
        if (PyErr_Occurred()) goto done;
        goto fallback; /* first sighting: Python infers the outputs and fills the cache */
    }
    if (!PyTuple_CheckExact(found) || PyTuple_GET_SIZE(found) != 4) {
        PyErr_SetString(PyExc_TypeError, "tape record: unexpected shape-cache entry");
        goto done;
    }
    Py_INCREF(found); /* kept across the Python code below (a cleared cache) */
    PyObject *multi = PyTuple_GET_ITEM(found, 0), *avals = PyTuple_GET_ITEM(found, 1);
    PyObject *structs = PyTuple_GET_ITEM(found, 2), *sig = PyTuple_GET_ITEM(found, 3);
    PyTypeObject *cls = (PyTypeObject *)out_cls;
    if (!PyType_Check(out_cls) || !array_fast(cls) || !PyTuple_Check(structs)) {
        Py_DECREF(found);
        goto fallback;
    }
    /* the thread's open region, which the node joins: a read above (to_jax) may have closed the one
     * found first (another thread's read of it), then plan_add reads its lazy inputs now */
    if (lock_tape() < 0) {
        Py_DECREF(found);
        goto done;
    }
    locked = 1;
    Py_XSETREF(region, current_region());
    if (region == NULL && PyErr_Occurred()) {
        Py_DECREF(found);
        goto done;
    }
    /* from here on the recorder changes things: the Python one is not called any more */
    held = PyTuple_New(n);
    diff_tuple = held ? PyList_AsTuple(diff) : NULL;
    seq = diff_tuple ? PyIter_Next(sequence) : NULL;
    if (seq == NULL) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "tape record: the node counter ended");
        Py_DECREF(found);
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = PyTuple_GET_ITEM(inputs, i);
        if (PyTuple_GET_ITEM(datas, i) != lazy_input) {
            PyTuple_SET_ITEM(held, i, Py_NewRef(x));
            continue;
        }
        /* _alias: another array with x's value and entry, so whether anyone else holds x stays observable */
        PyObject *var = get(x, array_offsets[A_VAR]);
        PyObject *alias = new_array(Py_TYPE(x), get(x, array_offsets[A_DATA]), var, get(x, array_offsets[A_AG]),
                                    get(x, array_offsets[A_DC]));
        if (alias == NULL) {
            Py_DECREF(found);
            goto done;
        }
        PyTuple_SET_ITEM(held, i, alias);
    }
    node = PyBaseObject_Type.tp_new((PyTypeObject *)node_type, empty_tuple, NULL);
    if (node == NULL) {
        Py_DECREF(found);
        goto done;
    }
    PyObject *values[N_COUNT] = {key, fn, held, entries, diff_tuple, Py_None, avals, multi, seq, name, Py_None,
                                 Py_False, Py_None, Py_None, Py_False};
    for (int k = 0; k < N_COUNT; k++) put(node, node_offsets[k], Py_NewRef(values[k]));
    if (region == NULL && (region = new_region()) == NULL) {
        Py_DECREF(found);
        goto done;
    }
    put(node, node_offsets[N_REGION], Py_NewRef(region));
    /* the node joins the region and its outputs are made under the lock: a read from another thread
     * runs the region whole, and must find every output of its nodes to hand their values to */
    Py_ssize_t m = PyTuple_GET_SIZE(structs), start = -1;
    int is_multi = PyObject_IsTrue(multi);
    PyObject *fuse_on_repeat = repeat && defer ? Py_True : Py_False;
    if (is_multi < 0 || (!is_multi && m != 1) || plan_add(region, node, datas, sig, fuse_on_repeat) < 0) {
        if (is_multi == 0 && m != 1) PyErr_SetString(PyExc_TypeError, "tape record: a single-output entry with several structs");
        Py_DECREF(found);
        goto done;
    }
    PyObject *starts = PyObject_GetAttr(region, s_starts); /* (plan_add checked it is a list) */
    PyObject *handles = starts ? PyObject_GetAttr(region, s_handles) : NULL;
    if (handles != NULL && !PyList_Check(handles)) {
        PyErr_SetString(PyExc_TypeError, "tape record: unexpected Plan attributes");
    } else if (handles != NULL && PyList_GET_SIZE(starts) >= 2) {
        start = PyLong_AsSsize_t(PyList_GET_ITEM(starts, PyList_GET_SIZE(starts) - 2));
    }
    PyObject *made = start < 0 ? NULL : PyTuple_New(m);
    for (Py_ssize_t j = 0; made != NULL && j < m; j++) {
        PyObject *o = deferred_output(node, j, region, handles, start, PyTuple_GET_ITEM(structs, j), cls);
        if (o == NULL) {
            Py_CLEAR(made);
            break;
        }
        PyTuple_SET_ITEM(made, j, o);
    }
    if (made != NULL) {
        result = is_multi ? Py_NewRef(made) : Py_NewRef(PyTuple_GET_ITEM(made, 0));
    } else if (!PyErr_Occurred()) {
        PyErr_SetString(PyExc_IndexError, "tape record: bad output start");
    }
    Py_XDECREF(starts);
    Py_XDECREF(handles);
    Py_XDECREF(made);
    Py_DECREF(found);
    goto done;
fallback:
    result = Py_NewRef(Py_NotImplemented);
done:
    if (locked) unlock_tape();
    Py_DECREF(inputs);
    Py_XDECREF(shape_key);
    Py_XDECREF(datas);
    Py_XDECREF(entries);
    Py_XDECREF(diff);
    Py_XDECREF(held);
    Py_XDECREF(node);
    Py_XDECREF(region);
    Py_XDECREF(diff_tuple);
    Py_XDECREF(seq);
    return result;
}

static PyMethodDef methods[] = {
    {"configure", configure, METH_VARARGS,
     "configure(array_type, Node, Pending, Plan, Leaf, SHAPE_CACHE, INEXACT, LAZY_INPUT, aval_key, sequence, "
     "thread_local, LOCK): the classes and tables the recorder works with; returns whether it can (their "
     "attributes are plain slots)."},
    {"record", (PyCFunction)(void (*)(void))record, METH_FASTCALL,
     "record(key, fn, inputs, out_cls, name, defer, repeat): _tape.recording.record's deferred case, in C; "
     "NotImplemented where the Python recorder must record the op."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "mxjax._tape._record",
                                    "The autograd tape's recorder of deferred nodes, in C.", -1, methods};

PyMODINIT_FUNC PyInit__record(void) {
    static const interned_name names[] = {
        {&s_data, "_data"}, {&s_var, "_var"}, {&s_ag, "_ag"}, {&s_dc, "_dc"}, {&s_key, "key"}, {&s_fn, "fn"},
        {&s_inputs, "inputs"}, {&s_entries, "entries"}, {&s_diff, "diff"}, {&s_vjp, "vjp"},
        {&s_out_avals, "out_avals"}, {&s_multi, "multi"}, {&s_seq, "seq"}, {&s_name, "name"}, {&s_custom, "custom"},
        {&s_dynamic, "dynamic"}, {&s_fused, "fused"}, {&s_region, "region"}, {&s_ints, "ints"},
        {&s_segment, "segment"},
        {&s_index, "index"}, {&s_aval, "aval"}, {&s_value, "value"}, {&s_error, "error"}, {&s_owner, "owner"},
        {&s_sharers, "sharers"}, {&s_source, "source"}, {&s_producer, "producer"}, {&s_handles, "handles"},
        {&s_ext_values, "ext_values"}, {&s_internal, "internal"}, {&s_target_index, "target_index"},
        {&s_targets, "targets"}, {&s_target_slots, "target_slots"}, {&s_leaf_targets, "leaf_targets"},
        {&s_diff_positions, "diff_positions"}, {&s_refs, "refs"}, {&s_ops, "ops"},
        {&s_node_wiring, "node_wiring"}, {&s_starts, "starts"}, {&s_dtype, "dtype"}, {&s_shape, "shape"}, {&s_to_jax, "to_jax"},
        {&s_open, "open"}, {&s_acquire, "acquire"}, {&s_release, "release"},
    };
    if (intern_names(names, sizeof(names) / sizeof(names[0])) < 0) return NULL;
    empty_tuple = PyTuple_New(0);
    if (empty_tuple == NULL) return NULL;
    return PyModule_Create(&module);
}
