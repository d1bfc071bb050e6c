//! An in-memory object store for crash and failure tests:
//!
//! - with imaging on, after every successful write (put, copy, rename, delete) it copies the
//!   whole store into a new `InMemory`: the disk a process that crashed right after that write
//!   would leave behind, labelled with the write;
//! - with a write budget set, the writes past the budget (put, copy, rename) return an error
//!   and write nothing (a full disk, a revoked credential); reads and deletes still work;
//! - set unreachable, every call fails as a network failure would (an S3 endpoint gone) until
//!   it is reachable again.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use futures_util::stream::{self, BoxStream, StreamExt};
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    ObjectStoreExt, PutMultipartOptions, PutOptions, PutPayload, PutResult, RenameOptions,
};

type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// See the module documentation.
#[derive(Debug)]
pub struct FaultyStore {
    inner: Arc<InMemory>,
    imaging: AtomicBool,
    /// Writes still allowed; negative: no limit.
    write_budget: AtomicI64,
    failed_writes: AtomicU64,
    unreachable: AtomicBool,
    /// Listing calls made (of any kind): what an object store bills and a poll costs.
    listings: AtomicU64,
    images: Mutex<Vec<(String, Arc<InMemory>)>>,
}

impl FaultyStore {
    /// An empty store.
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            inner: Arc::new(InMemory::new()),
            imaging: AtomicBool::new(false),
            write_budget: AtomicI64::new(-1),
            failed_writes: AtomicU64::new(0),
            unreachable: AtomicBool::new(false),
            listings: AtomicU64::new(0),
            images: Mutex::new(Vec::new()),
        })
    }

    /// Starts (or stops) imaging the store after every write.
    pub fn set_imaging(&self, on: bool) {
        self.imaging.store(on, Ordering::SeqCst);
    }

    /// Lets `writes` more writes succeed and fails every one after them (`None`: no limit).
    pub fn set_write_budget(&self, writes: Option<u32>) {
        self.write_budget
            .store(writes.map_or(-1, i64::from), Ordering::SeqCst);
    }

    /// Cuts the store off (every call fails as a refused connection) or reconnects it.
    pub fn set_unreachable(&self, unreachable: bool) {
        self.unreachable.store(unreachable, Ordering::SeqCst);
    }

    fn reach(&self) -> object_store::Result<()> {
        if self.unreachable.load(Ordering::SeqCst) {
            return Err(object_store::Error::Generic {
                store: "FaultyStore",
                source: Box::new(std::io::Error::from(std::io::ErrorKind::ConnectionRefused)),
            });
        }
        Ok(())
    }

    /// `stream`, or a stream of the one error while the store is unreachable.
    fn reach_stream<T: Send + 'static>(
        &self,
        stream: BoxStream<'static, object_store::Result<T>>,
    ) -> BoxStream<'static, object_store::Result<T>> {
        match self.reach() {
            Ok(()) => stream,
            Err(e) => stream::iter([Err(e)]).boxed(),
        }
    }

    /// Listing calls made so far.
    pub fn listings(&self) -> u64 {
        self.listings.load(Ordering::SeqCst)
    }

    /// Writes refused so far.
    pub fn failed_writes(&self) -> u64 {
        self.failed_writes.load(Ordering::SeqCst)
    }

    /// The images taken since imaging started, oldest first: `(write, store after it)`.
    pub fn take_images(&self) -> Vec<(String, Arc<InMemory>)> {
        std::mem::take(&mut self.images.lock().unwrap())
    }

    /// The wrapped store (what a process restarted after a crash would open).
    pub fn inner(&self) -> Arc<InMemory> {
        Arc::clone(&self.inner)
    }

    fn refuse(&self, what: &str, location: &Path) -> Option<object_store::Error> {
        if let Err(e) = self.reach() {
            return Some(e);
        }
        let allowed = self
            .write_budget
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |left| {
                (left > 0).then(|| left - 1)
            })
            .is_ok();
        if allowed || self.write_budget.load(Ordering::SeqCst) < 0 {
            return None;
        }
        self.failed_writes.fetch_add(1, Ordering::SeqCst);
        Some(object_store::Error::Generic {
            store: "FaultyStore",
            source: format!("{what} {location}: writes are failing").into(),
        })
    }

    async fn image(&self, write: String) -> object_store::Result<()> {
        if !self.imaging.load(Ordering::SeqCst) {
            return Ok(());
        }
        let copy = Arc::new(InMemory::new());
        for path in all_paths(&*self.inner).await? {
            let bytes = self.inner.get(&path).await?.bytes().await?;
            copy.put(&path, PutPayload::from(bytes)).await?;
        }
        self.images.lock().unwrap().push((write, copy));
        Ok(())
    }
}

/// Every object path of `store`, sorted.
pub async fn all_paths(store: &dyn ObjectStore) -> object_store::Result<Vec<Path>> {
    let mut pending = vec![Path::default()];
    let mut found = Vec::new();
    while let Some(dir) = pending.pop() {
        let listing = store.list_with_delimiter(Some(&dir)).await?;
        found.extend(listing.objects.into_iter().map(|m| m.location));
        pending.extend(listing.common_prefixes);
    }
    found.sort();
    Ok(found)
}

impl fmt::Display for FaultyStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FaultyStore({})", self.inner)
    }
}

// `ObjectStore` is an `async_trait`; its methods are written out as the macro expands them.
impl ObjectStore for FaultyStore {
    fn put_opts<'a, 'b, 'c>(
        &'a self,
        location: &'b Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> BoxFuture<'c, object_store::Result<PutResult>>
    where
        'a: 'c,
        'b: 'c,
        Self: 'c,
    {
        Box::pin(async move {
            if let Some(e) = self.refuse("put", location) {
                return Err(e);
            }
            let result = self.inner.put_opts(location, payload, opts).await?;
            self.image(format!("put {location}")).await?;
            Ok(result)
        })
    }

    fn put_multipart_opts<'a, 'b, 'c>(
        &'a self,
        location: &'b Path,
        opts: PutMultipartOptions,
    ) -> BoxFuture<'c, object_store::Result<Box<dyn MultipartUpload>>>
    where
        'a: 'c,
        'b: 'c,
        Self: 'c,
    {
        Box::pin(async move {
            if let Some(e) = self.refuse("multipart put", location) {
                return Err(e);
            }
            self.inner.put_multipart_opts(location, opts).await
        })
    }

    fn get_opts<'a, 'b, 'c>(
        &'a self,
        location: &'b Path,
        options: GetOptions,
    ) -> BoxFuture<'c, object_store::Result<GetResult>>
    where
        'a: 'c,
        'b: 'c,
        Self: 'c,
    {
        Box::pin(async move {
            self.reach()?;
            self.inner.get_opts(location, options).await
        })
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        // Deletes are not imaged: the tests image a commit, which never deletes.
        self.reach_stream(self.inner.delete_stream(locations))
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.listings.fetch_add(1, Ordering::SeqCst);
        self.reach_stream(self.inner.list(prefix))
    }

    fn list_with_offset(
        &self,
        prefix: Option<&Path>,
        offset: &Path,
    ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.listings.fetch_add(1, Ordering::SeqCst);
        self.reach_stream(self.inner.list_with_offset(prefix, offset))
    }

    fn list_with_delimiter<'a, 'b, 'c>(
        &'a self,
        prefix: Option<&'b Path>,
    ) -> BoxFuture<'c, object_store::Result<ListResult>>
    where
        'a: 'c,
        'b: 'c,
        Self: 'c,
    {
        Box::pin(async move {
            self.listings.fetch_add(1, Ordering::SeqCst);
            self.reach()?;
            self.inner.list_with_delimiter(prefix).await
        })
    }

    fn copy_opts<'a, 'b, 'd, 'c>(
        &'a self,
        from: &'b Path,
        to: &'d Path,
        options: CopyOptions,
    ) -> BoxFuture<'c, object_store::Result<()>>
    where
        'a: 'c,
        'b: 'c,
        'd: 'c,
        Self: 'c,
    {
        Box::pin(async move {
            if let Some(e) = self.refuse("copy", to) {
                return Err(e);
            }
            self.inner.copy_opts(from, to, options).await?;
            self.image(format!("copy {from} → {to}")).await
        })
    }

    fn rename_opts<'a, 'b, 'd, 'c>(
        &'a self,
        from: &'b Path,
        to: &'d Path,
        options: RenameOptions,
    ) -> BoxFuture<'c, object_store::Result<()>>
    where
        'a: 'c,
        'b: 'c,
        'd: 'c,
        Self: 'c,
    {
        Box::pin(async move {
            if let Some(e) = self.refuse("rename", to) {
                return Err(e);
            }
            self.inner.rename_opts(from, to, options).await?;
            self.image(format!("rename {from} → {to}")).await
        })
    }
}
