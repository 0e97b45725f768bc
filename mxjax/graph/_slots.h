/* Python objects' __slots__ read and written from C at their offsets, as CPython's member
 * descriptors do: what the recorders in C (graph/_record.c, _tape/_record.c) share.
 *
 * A recorder finds each attribute's offset once (``slot_of``); a subclass is served by the same
 * offsets only if it kept the base class's descriptors (``keeps_slots``), else the recorder
 * goes through getattr/setattr or leaves the op to its Python twin.
 */
#ifndef MXJAX_SLOTS_H
#define MXJAX_SLOTS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

typedef struct {
    PyObject **slot;
    const char *name;
} interned_name;

/* Interns each name into its slot; -1 on failure. */
static int intern_names(const interned_name *names, size_t count) {
    for (size_t i = 0; i < count; i++) {
        *names[i].slot = PyUnicode_InternFromString(names[i].name);
        if (*names[i].slot == NULL) return -1;
    }
    return 0;
}

/* The offset of a writable object slot ``name`` of ``type`` (its descriptor, a new reference, in
 * ``*descr_out`` when given, replacing what was there), or -1. */
static Py_ssize_t slot_of(PyObject *type, PyObject *name, PyObject **descr_out) {
    PyObject *descr = PyObject_GetAttr(type, name);
    if (descr == NULL) {
        PyErr_Clear();
        return -1;
    }
    Py_ssize_t offset = -1;
    if (Py_TYPE(descr) == &PyMemberDescr_Type) {
        PyMemberDef *member = ((PyMemberDescrObject *)descr)->d_member;
        if (member->type == T_OBJECT_EX && !(member->flags & READONLY)) offset = member->offset;
    }
    if (descr_out != NULL && offset >= 0) Py_XSETREF(*descr_out, descr);
    else Py_DECREF(descr);
    return offset;
}

/* Whether objects of ``cls`` keep a base class's slots: each ``names[i]`` of ``cls`` is still
 * the descriptor ``descrs[i]`` (and ``base_ok``: the base class's were all plain slots).  The
 * answer is kept per class in the dict ``known``. */
static int keeps_slots(PyTypeObject *cls, int base_ok, PyObject **const *names, PyObject *const *descrs, int count,
                       PyObject *known) {
    PyObject *found = PyDict_GetItem(known, (PyObject *)cls); /* borrowed; no error for a type key */
    if (found != NULL) return found == Py_True;
    int fast = base_ok;
    for (int i = 0; fast && i < count; i++) {
        PyObject *descr = PyObject_GetAttr((PyObject *)cls, *names[i]);
        if (descr == NULL) PyErr_Clear();
        fast = descr == descrs[i];
        Py_XDECREF(descr);
    }
    if (PyDict_SetItem(known, (PyObject *)cls, fast ? Py_True : Py_False) < 0) PyErr_Clear();
    return fast;
}

#endif
