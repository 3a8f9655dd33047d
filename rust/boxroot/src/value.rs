//! Non-rooted OCaml values (the Boxroot paper, §4.4): the C type `value`, with a
//! lifetime that borrows the runtime capability.
//!
//! Invariant: a `Value<'a>` is always safe to read: it is an immediate, a
//! static block, or a block of the OCaml heap that no collection has run
//! over since it was obtained. The lifetime enforces the last part: values
//! come from `&'a Runtime` (or are `'static` immediates), and collections
//! need `&mut Runtime`. Every constructor keeps the invariant; the unsafe
//! `from_raw` passes it on to its caller.
use crate::cell::ValueCell;
use crate::ffi::{self, RawValue};
use crate::Runtime;
use std::fmt;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicIsize, AtomicUsize, Ordering};

/// The raw representation of `()`.
pub(crate) const UNIT_RAW: RawValue = 1;

/// Tags of blocks whose fields are not all OCaml values, in OCaml 5 (also
/// harmless for 4.14, which has no continuation tag).
const CONT_TAG: u8 = 245;
const CLOSURE_TAG: u8 = 247;
const INFIX_TAG: u8 = 249;
/// From this tag on, fields are not scanned (strings, floats, custom blocks).
const NO_SCAN_TAG: u8 = 251;
const STRING_TAG: u8 = 252;
/// The header's word size starts at this bit (below: colour and tag).
const WOSIZE_SHIFT: u32 = 10;

/// Whether every field of a block with this tag is an OCaml value, so that
/// reading or initialising a field as a [`Value`] is safe.
pub(crate) fn fields_are_values(tag: u8) -> bool {
    tag < NO_SCAN_TAG && tag != CONT_TAG && tag != CLOSURE_TAG && tag != INFIX_TAG
}

/// An OCaml value that is not rooted: an immediate, or a pointer to a block
/// that stays valid until the next allocation or collection.
///
/// `Value` is `Copy`, and its lifetime `'a` borrows the [`Runtime`]
/// immutably. Since allocation takes `&mut Runtime`, the compiler rejects
/// any use of a heap value after an allocation: to keep one, root it with
/// [`Root::create`](crate::Root::create). Immediates are `Value<'static>`.
///
/// `&Value` converts to [`ValueRef`](crate::ValueRef) (by `Deref`), so a
/// value can be passed wherever a reference is expected.
#[derive(Copy, Clone)]
#[repr(transparent)]
pub struct Value<'a> {
    raw: RawValue,
    _marker: PhantomData<&'a Runtime>,
}

/// The immediate OCaml integer `n` (`Val_long`): a value for any lifetime.
/// Panics if `n` does not fit in 63 bits.
pub fn val_long(n: isize) -> Value<'static> {
    Value::long(n)
}

impl<'a> Value<'a> {
    /// The immediate OCaml integer `n` (`Val_long`); see [`val_long`].
    pub fn long(n: isize) -> Value<'static> {
        assert!(
            n.checked_mul(2).is_some(),
            "Value::long: {} does not fit in an OCaml int",
            n
        );
        Value {
            raw: (n << 1) | 1,
            _marker: PhantomData,
        }
    }

    /// `()`, the OCaml unit value.
    pub fn unit() -> Value<'static> {
        Value {
            raw: UNIT_RAW,
            _marker: PhantomData,
        }
    }

    /// A value from its raw representation (the C `value`).
    ///
    /// # Safety
    /// `raw` is an immediate, or points to a block that stays valid for
    /// `'a` (for instance: a block of the OCaml heap, with `'a` borrowing the
    /// runtime since it was obtained without any allocation in between).
    pub unsafe fn from_raw(raw: isize) -> Value<'a> {
        Value {
            raw,
            _marker: PhantomData,
        }
    }

    /// The raw representation (the C `value`); using it after the next
    /// allocation is up to the caller.
    pub fn raw(self) -> isize {
        self.raw
    }

    /// Whether this is an immediate (an OCaml `int`, constant constructor,
    /// `()`, `bool`...).
    pub fn is_long(self) -> bool {
        self.raw & 1 == 1
    }

    /// Whether this points to a block.
    pub fn is_block(self) -> bool {
        !self.is_long()
    }

    /// The integer, if this is an immediate (`Long_val`).
    pub fn as_long(self) -> Option<isize> {
        if self.is_long() {
            Some(self.raw >> 1)
        } else {
            None
        }
    }

    fn header(self) -> Option<usize> {
        if self.is_long() {
            return None;
        }
        // SAFETY: a block (invariant of Value) has a header word before its
        // first field. The major GC of OCaml 5 changes colour bits
        // concurrently, hence the atomic load.
        let header = unsafe { AtomicUsize::from_ptr((self.raw as *mut usize).sub(1)) };
        Some(header.load(Ordering::Relaxed))
    }

    /// The tag of the block, or `None` for an immediate.
    pub fn tag(self) -> Option<u8> {
        self.header().map(|h| h as u8)
    }

    /// The size of the block in words, or `None` for an immediate.
    pub fn size(self) -> Option<usize> {
        self.header().map(|h| h >> WOSIZE_SHIFT)
    }

    fn field_ptr(self, i: usize) -> *mut RawValue {
        let tag = self
            .tag()
            .unwrap_or_else(|| panic!("Value::field: {:?} is not a block", self));
        assert!(
            fields_are_values(tag),
            "Value::field: the fields of a block with tag {} are not values",
            tag
        );
        let size = self.size().unwrap();
        assert!(
            i < size,
            "Value::field: field {} out of a block of size {}",
            i,
            size
        );
        // SAFETY: in bounds, checked above.
        unsafe { (self.raw as *mut RawValue).add(i) }
    }

    /// Field `i` of the block (`Field(v, i)`, the `Value::get` of §4.4),
    /// with the same lifetime. Panics if this is not a block whose fields
    /// are values (for instance a string, a float or a closure), or if `i`
    /// is out of bounds.
    pub fn field(self, i: usize) -> Value<'a> {
        let p = self.field_ptr(i);
        // SAFETY: a field of a live block; OCaml 5's memory model wants
        // heap fields read atomically (another domain may write them).
        let raw = unsafe { AtomicIsize::from_ptr(p) }.load(Ordering::Relaxed);
        Value {
            raw,
            _marker: PhantomData,
        }
    }

    /// A reference to field `i` (§4.6's `Value::get_ref`): it points into
    /// the OCaml heap, so it lives no longer than the value itself. Panics
    /// as [`Value::field`].
    pub fn field_ref(self, i: usize) -> &'a ValueCell {
        let p = self.field_ptr(i);
        // SAFETY: the field is a value (checked), valid for 'a (invariant).
        unsafe { ValueCell::from_ptr(p) }
    }

    /// A copy of the contents, if this is an OCaml string (or `bytes`).
    pub fn bytes(self) -> Option<Vec<u8>> {
        if self.tag() != Some(STRING_TAG) {
            return None;
        }
        // SAFETY: a string block of caml_string_length bytes.
        unsafe {
            let len = ffi::caml_string_length(self.raw);
            Some(std::slice::from_raw_parts(self.raw as *const u8, len).to_vec())
        }
    }
}

impl<'a> std::ops::Deref for Value<'a> {
    type Target = ValueCell;

    /// `&Value` as a [`ValueRef`](crate::ValueRef) (§4.6.1), so that
    /// non-rooted, immediate and static values can be passed by reference.
    fn deref(&self) -> &ValueCell {
        // SAFETY: ValueCell is a transparent AtomicIsize, which has the
        // layout of isize; it is only ever read through, never written.
        unsafe { ValueCell::from_ptr(&self.raw) }
    }
}

/// Physical equality (`==` in OCaml).
impl PartialEq for Value<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.raw == other.raw
    }
}

impl Eq for Value<'_> {}

impl fmt::Debug for Value<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.as_long() {
            Some(n) => write!(f, "Value(int {})", n),
            None => write!(
                f,
                "Value(block {:#x}, tag {}, size {})",
                self.raw,
                self.tag().unwrap(),
                self.size().unwrap()
            ),
        }
    }
}
