using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Text;
using System.Text.RegularExpressions;
using Lucene.Net.Store;
using NativeDir.Testing;
using Xunit;
using LuceneDirectory = Lucene.Net.Store.Directory;

namespace NativeDir.Lucene.Tests
{
    /// <summary>
    /// A differential sweep of the whole Directory contract: one script of steps (every operation
    /// of Directory, IndexInput, IndexOutput, the slicer, the checksum input and the locks, crossed
    /// with the states that matter) runs on NativeFSDirectory (default and merge context) and on
    /// Lucene.NET's own SimpleFSDirectory, NIOFSDirectory and MMapDirectory. A step's OUTCOME is
    /// what it observes (bytes, lengths, positions, lists) or the type of the exception thrown.
    /// NativeFSDirectory's outcome must be one a built-in kind produced for the same step (where the
    /// built-ins agree, exactly theirs), except in the rows marked as an accepted difference, whose
    /// reason the table prints. The table of every step and outcome goes to the test output.
    /// </summary>
    public class ContractSweepTests
    {
        private static readonly string[] BuiltIns = { "MMap", "NIOFS", "SimpleFS" };
        // default (inputs mapped), merge (outputs with direct I/O, inputs mapped with sequential
        // advice) and read-once (inputs through the managed buffer: the unmapped read path)
        private static readonly string[] Natives = { "NativeFS", "NativeFS-merge", "NativeFS-readonce" };

        internal enum Folder { Existing, Missing, IsAFile }

        private static FSDirectory Make(string kind, string path) => kind switch
        {
            "NativeFS" or "NativeFS-merge" or "NativeFS-readonce" => new NativeFSDirectory(new DirectoryInfo(path)),
            "MMap" => new MMapDirectory(new DirectoryInfo(path)),
            "NIOFS" => new NIOFSDirectory(new DirectoryInfo(path)),
            "SimpleFS" => new SimpleFSDirectory(new DirectoryInfo(path)),
            _ => MoreKinds.TryGetValue(kind, out Func<string, FSDirectory> make) ? make(path) : throw new ArgumentException(kind),
        };

        /// <summary>Kinds other classes sweep with this script (MiscContractSweepTests): a name (a
        /// "-merge" or "-readonce" suffix picks the context, as for NativeFS) and its factory.</summary>
        internal static readonly System.Collections.Concurrent.ConcurrentDictionary<string, Func<string, FSDirectory>> MoreKinds = new();

        /// <summary>The built-in kinds every outcome is compared with.</summary>
        internal static IReadOnlyList<string> BuiltInKinds => BuiltIns;

        /// <summary>One step's world: a fresh folder, the directory of one kind on it (made on first
        /// use), and the files the step prepares, written outside the directory so the preparation
        /// owes nothing to the kind under test.</summary>
        internal sealed class Env : IDisposable
        {
            private readonly TestDir _t = new("sweep");
            private FSDirectory _d;

            internal Env(string kind, Folder folder)
            {
                Kind = kind;
                Path = System.IO.Path.Combine(_t.Path, "idx");
                if (folder == Folder.Existing)
                    System.IO.Directory.CreateDirectory(Path);
                else if (folder == Folder.IsAFile)
                    File.WriteAllBytes(Path, new byte[] { 1 });
                Ctx = kind.EndsWith("-merge", StringComparison.Ordinal) ? new IOContext(new MergeInfo(1000, 1L << 30, true, 1))
                    : kind.EndsWith("-readonce", StringComparison.Ordinal) ? IOContext.READ_ONCE
                    : IOContext.DEFAULT;
            }

            internal string Kind { get; }
            internal string Path { get; }
            internal string Outside => System.IO.Path.Combine(_t.Path, "outside");
            internal IOContext Ctx { get; }
            internal FSDirectory D => _d ??= Make(Kind, Path);
            internal FSDirectory Another() => Make(Kind, System.IO.Path.Combine(_t.Path, "other"));

            internal string At(string name) => System.IO.Path.Combine(Path, name);

            /// <summary>Writes <paramref name="n"/> bytes of <see cref="Data"/> to a file of the folder.</summary>
            internal void Put(string name, int n = FileSize)
            {
                string p = At(name);
                System.IO.Directory.CreateDirectory(System.IO.Path.GetDirectoryName(p)!);
                File.WriteAllBytes(p, Data.AsSpan(0, n).ToArray());
            }

            internal IndexInput In(string name) => D.OpenInput(name, Ctx);
            internal IndexOutput Out(string name) => D.CreateOutput(name, Ctx);

            public void Dispose()
            {
                try
                {
                    _d?.Dispose();
                }
                catch (Exception)
                {
                    // a step may have disposed it or broken it on purpose
                }
                try
                {
                    _t.Dispose();
                }
                catch (Exception)
                {
                    // Windows refuses to delete a file something still maps: only a temp folder
                }
            }
        }

        internal const int FileSize = 10_000;
        internal static readonly byte[] Data = MakeData();

        private static byte[] MakeData()
        {
            var b = new byte[FileSize];
            new Random(20261201).NextBytes(b);
            return b;
        }

        /// <summary>The outcome of one action: what it returned, shown kind-independently, or
        /// "!" and the exception's type.</summary>
        internal static string R(Func<object> f)
        {
            try
            {
                return Show(f());
            }
            catch (Exception e)
            {
                return "!" + e.GetType().Name;
            }
        }

        internal static string R(Action a) => R(() => { a(); return "ok"; });

        private static string Show(object o) => o switch
        {
            null => "null",
            byte[] b => $"{b.Length}b:{Crc(b):x8}",
            string[] s => "[" + string.Join(",", s) + "]",
            bool v => v ? "T" : "F",
            _ => o.ToString(),
        };

        internal static uint Crc(ReadOnlySpan<byte> data)
        {
            uint c = 0xFFFFFFFFu;
            foreach (byte b in data)
            {
                c ^= b;
                for (int k = 0; k < 8; k++)
                    c = (c & 1) != 0 ? (c >> 1) ^ 0xEDB88320u : c >> 1;
            }
            return ~c;
        }

        internal static byte[] ReadN(IndexInput i, int n)
        {
            var b = new byte[n];
            i.ReadBytes(b, 0, n);
            return b;
        }

        private static string Join(params string[] parts) => string.Join(" ", parts);

        /// <summary>A row of the script: a name, the folder's state, the actions.</summary>
        internal sealed record Step(string Name, Folder Folder, Func<Env, string> Run, Accept Accepted = null)
        {
            /// <summary>The step deletes a file or folder something holds open: its outcome is the
            /// OS's delete semantics. Windows (and Wine) keep such a name unless every handle shares
            /// delete: the built-ins' streams do not, nativedir's file handles do and its folder
            /// handle does not. Asserted on POSIX; on Windows printed and, if it differs, reported
            /// loudly as not asserted.</summary>
            public bool PosixDelete { get; init; }
        }

        /// <summary>A difference from every built-in kind, kept on purpose: why, and the outcome
        /// NativeFSDirectory must then produce (a regular expression), so the row still fails if
        /// ours changes.</summary>
        internal sealed record Accept(string Reason, string Ours);

        private static Step S(string name, Func<Env, string> run, Accept accepted = null) => new(name, Folder.Existing, run, accepted);

        // ---- the names a Directory is asked about, and how each is prepared ----

        private static readonly (string Label, Func<Env, string> Name, Action<Env> Prepare)[] Names =
        {
            ("existing", e => "f", e => e.Put("f")),
            ("empty(0b)", e => "e0", e => e.Put("e0", 0)),
            ("missing", e => "nope", e => { }),
            ("a folder's name", e => "sub", e => e.Put("sub/inner", 5)),
            ("\"\"", e => "", e => { }),
            ("null", e => null, e => { }),
            ("sub/inner (separator)", e => "sub/inner", e => e.Put("sub/inner", 5)),
            ("nosub/x (separator, missing)", e => "nosub/x", e => { }),
            ("\".\"", e => ".", e => { }),
            ("\"..\"", e => "..", e => { }),
            ("absolute path outside", e => e.Outside, e => File.WriteAllBytes(e.Outside, new byte[] { 1, 2, 3 })),
        };

        private static readonly Accept SafeNames = new(
            "names are single components of the directory (nd_ rejects separators, \"\", \".\", \"..\" and absolute paths "
            + "with ArgumentException); Lucene names files flat, and a built-in FSDirectory would read, write or delete outside its folder",
            "^!ArgumentException( |$)");

        private static Accept AcceptedFor(string label) => label switch
        {
            "sub/inner (separator)" or "nosub/x (separator, missing)" or "absolute path outside" or "\"\"" or "\".\"" or "\"..\"" => SafeNames,
            _ => null,
        };

        private static IEnumerable<Step> NameMatrix()
        {
            foreach (var (label, name, prepare) in Names)
            {
                Accept acc = AcceptedFor(label);
                yield return S($"FileExists({label})", e => { prepare(e); return R(() => e.D.FileExists(name(e))); }, acc);
                yield return S($"FileLength({label})", e => { prepare(e); return R(() => e.D.FileLength(name(e))); }, acc);
                yield return S($"OpenInput({label})", e =>
                {
                    prepare(e);
                    return R(() =>
                    {
                        using IndexInput i = e.In(name(e));
                        return $"len={i.Length} pos={i.Position}" + (i.Length > 0 ? $" b0={i.ReadByte()}" : "");
                    });
                }, acc);
                yield return S($"DeleteFile({label})", e =>
                {
                    prepare(e);
                    string n = name(e);
                    return Join(R(() => e.D.DeleteFile(n)), "exists:" + R(() => n != null && File.Exists(System.IO.Path.Combine(e.Path, n))));
                }, acc);
                yield return S($"CreateOutput({label}) write 3, close", e =>
                {
                    prepare(e);
                    string n = name(e);
                    string made = R(() =>
                    {
                        using IndexOutput o = e.Out(n);
                        o.WriteBytes(new byte[] { 7, 8, 9 }, 3);
                        return "ok";
                    });
                    string file = R(() => File.ReadAllBytes(System.IO.Path.Combine(e.Path, n)));
                    return Join(made, "file:" + file, "list:" + R(() => e.D.ListAll().OrderBy(x => x, StringComparer.Ordinal).ToArray()));
                }, acc);
            }
        }

        // ---- the folder missing, a file in its place, removed under the directory ----

        private static Step M(string name, Func<Env, string> run, Accept accepted = null) =>
            new(name, Folder.Missing, e => Join(run(e), "folder:" + R(() => System.IO.Directory.Exists(e.Path))), accepted);

        private static IEnumerable<Step> FolderSteps()
        {
            yield return new Step("ctor: the folder is a file", Folder.IsAFile, e => R(() => e.D.ListAll()));
            yield return M("no folder: ListAll", e => R(() => e.D.ListAll()));
            yield return M("no folder: FileExists", e => R(() => e.D.FileExists("f")));
            yield return M("no folder: FileLength", e => R(() => e.D.FileLength("f")));
            yield return M("no folder: OpenInput", e => R(() => e.In("f")));
            yield return M("no folder: CreateSlicer", e => R(() => e.D.CreateSlicer("f", e.Ctx)));
            yield return M("no folder: DeleteFile", e => R(() => e.D.DeleteFile("f")));
            yield return M("no folder: Sync([f])", e => R(() => e.D.Sync(new[] { "f" })));
            yield return M("no folder: ClearLock", e => R(() => e.D.ClearLock("write.lock")));
            yield return M("no folder: CreateOutput", e => R(() => { e.Out("x").Dispose(); return e.D.ListAll(); }));
            yield return M("no folder: Obtain a lock", e => R(() => e.D.MakeLock("write.lock").Obtain()));
            yield return S("folder removed after use: ListAll, FileExists, OpenInput, FileLength", e =>
            {
                e.Put("f");
                e.D.ListAll();
                System.IO.Directory.Delete(e.Path, true);
                return Join(R(() => e.D.ListAll()), R(() => e.D.FileExists("f")), R(() => e.In("f")), R(() => e.D.FileLength("f")));
            }) with { PosixDelete = true };
            yield return S("folder removed after use: CreateOutput, then ListAll", e =>
            {
                e.Put("f");
                e.D.ListAll();
                System.IO.Directory.Delete(e.Path, true);
                return Join(R(() => { using IndexOutput o = e.Out("x"); o.WriteByte(1); return "ok"; }),
                            R(() => e.D.ListAll()), R(() => File.Exists(e.At("x"))));
            }) with { PosixDelete = true };
            yield return S("folder removed and made again: ListAll, OpenInput, CreateOutput", e =>
            {
                e.Put("f");
                e.D.ListAll();
                System.IO.Directory.Delete(e.Path, true);
                e.Put("g", 10);
                return Join(R(() => e.D.ListAll()), R(() => { using IndexInput i = e.In("g"); return i.Length; }),
                            R(() => { e.Out("x").Dispose(); return File.Exists(e.At("x")); }));
            }) with { PosixDelete = true };
        }

        // ---- Directory ----

        private static IEnumerable<Step> DirectorySteps()
        {
            yield return S("ListAll: empty folder", e => R(() => e.D.ListAll()));
            yield return S("ListAll: files, dotfile, subfolder (sorted)", e =>
            {
                e.Put("b", 1);
                e.Put("a", 2);
                e.Put(".hidden", 3);
                e.Put("sub/inner", 4);
                System.IO.Directory.CreateDirectory(e.At("emptysub"));
                return R(() => e.D.ListAll().OrderBy(x => x, StringComparer.Ordinal).ToArray());
            });
            yield return S("ListAll: order (as the folder lists it? sorted?)", e =>
            {
                foreach (string n in new[] { "_3.si", "_1.cfs", "segments_2", "_0.fdt", "write.lock", "_2.tim", "_10.si" })
                    e.Put(n, 1);
                string[] all = e.D.ListAll();
                return Join(R(() => all.SequenceEqual(new DirectoryInfo(e.Path).EnumerateFiles().Select(f => f.Name))),
                            R(() => all.SequenceEqual(all.OrderBy(x => x, StringComparer.Ordinal))));
            }, new("NativeFSDirectory lists names sorted by their UTF-8 bytes (nd_list), the same on every OS and file "
                   + "system; the built-ins list in the folder's own order, which Lucene never relies on (it sorts where order matters)",
                   "^[TF] T$"));
            yield return S("ListAll: an output just created, nothing written", e =>
            {
                using IndexOutput o = e.Out("new");
                return Join(R(() => e.D.ListAll()), R(() => e.D.FileLength("new")), R(() => e.D.FileExists("new")));
            });
            yield return S("ListAll: file deleted outside after write", e =>
            {
                using (IndexOutput o = e.Out("afile"))
                    o.WriteString("boo");
                File.Delete(e.At("afile"));
                return Join(R(() => e.D.ListAll()), R(() => e.D.Sync(new[] { "afile" })));
            });
            yield return S("Dispose twice; ListAll", e => Join(R(() => e.D.Dispose()), R(() => e.D.Dispose()), R(() => e.D.ListAll())));
            foreach (var (op, act) in new (string, Func<Env, object>)[]
            {
                ("ListAll", e => e.D.ListAll()),
                ("FileExists", e => e.D.FileExists("f")),
                ("FileLength", e => e.D.FileLength("f")),
                ("OpenInput", e => e.In("f")),
                ("OpenChecksumInput", e => e.D.OpenChecksumInput("f", e.Ctx)),
                ("CreateSlicer", e => e.D.CreateSlicer("f", e.Ctx)),
                ("DeleteFile", e => { e.D.DeleteFile("f"); return File.Exists(e.At("f")); }),
                ("CreateOutput", e => e.Out("x")),
                ("Sync([f])", e => { e.D.Sync(new[] { "f" }); return "ok"; }),
                ("Sync([])", e => { e.D.Sync(Array.Empty<string>()); return "ok"; }),
                ("MakeLock+Obtain", e => e.D.MakeLock("write.lock").Obtain()),
                ("ClearLock", e => { e.D.ClearLock("write.lock"); return "ok"; }),
                ("GetLockID", e => e.D.GetLockID().StartsWith("lucene-", StringComparison.Ordinal)),
                ("Directory property", e => e.D.Directory.Name),
                ("Copy to another", e => { using FSDirectory o = e.Another(); e.D.Copy(o, "f", "g", IOContext.DEFAULT); return o.FileLength("g"); }),
                ("Copy from another", e =>
                {
                    using FSDirectory o = e.Another();
                    using (IndexOutput w = o.CreateOutput("g", IOContext.DEFAULT))
                        w.WriteByte(1);
                    o.Copy(e.D, "g", "h", IOContext.DEFAULT);
                    return File.Exists(e.At("h"));
                }),
            })
            {
                yield return S($"disposed directory: {op}", e =>
                {
                    e.Put("f");
                    e.D.Dispose();
                    return R(() => act(e));
                });
            }
            yield return S("disposed directory: an input opened before still reads", e =>
            {
                e.Put("f");
                using IndexInput i = e.In("f");
                e.D.Dispose();
                return R(() => ReadN(i, FileSize));
            });
            yield return S("disposed directory: an output opened before still writes", e =>
            {
                IndexOutput o = e.Out("w");
                e.D.Dispose();
                return Join(R(() => o.WriteBytes(Data, 100)), R(() => o.Dispose()), R(() => File.ReadAllBytes(e.At("w"))));
            });
            yield return S("DeleteFile: an open input still reads", e =>
            {
                e.Put("f");
                using IndexInput i = e.In("f");
                string del = R(() => e.D.DeleteFile("f"));
                return Join(del, R(() => e.D.FileExists("f")), R(() => ReadN(i, FileSize)));
            }) with { PosixDelete = true };
            yield return S("DeleteFile: an open output", e =>
            {
                IndexOutput o = e.Out("w");
                o.WriteBytes(Data, 10);
                string del = R(() => e.D.DeleteFile("w"));
                return Join(del, R(() => e.D.FileExists("w")), R(() => o.Dispose()), R(() => e.D.FileExists("w")));
            }) with { PosixDelete = true };
            yield return S("DeleteFile twice", e =>
            {
                e.Put("f");
                return Join(R(() => e.D.DeleteFile("f")), R(() => e.D.DeleteFile("f")));
            });
            yield return S("CreateOutput over a file an input reads", e =>
            {
                e.Put("f");
                using IndexInput i = e.In("f");
                using (IndexOutput o = e.Out("f"))
                    o.WriteBytes(Data, 5000, 3);
                return Join(R(() => e.D.FileLength("f")), R(() => ReadN(i, FileSize)));
            }) with { PosixDelete = true };
            yield return S("CreateOutput twice, both open, closed in order", e =>
            {
                IndexOutput a = e.Out("w");
                a.WriteBytes(Data, 100);
                string second = R(() =>
                {
                    IndexOutput b = e.Out("w");
                    b.WriteBytes(Data, 50, 3);
                    a.Dispose();
                    b.Dispose();
                    return "ok";
                });
                a.Dispose();
                return Join(second, R(() => File.ReadAllBytes(e.At("w"))));
            }) with { PosixDelete = true };
            yield return S("OpenInput of an output: nothing flushed", e =>
            {
                using IndexOutput o = e.Out("w");
                o.WriteBytes(Data, 3);
                return R(() => { using IndexInput i = e.In("w"); return i.Length; });
            });
            yield return S("OpenInput of an output: after Flush", e =>
            {
                using IndexOutput o = e.Out("w");
                o.WriteBytes(Data, 3000);
                o.Flush();
                return R(() => { using IndexInput i = e.In("w"); return ReadN(i, (int)i.Length); });
            });
            yield return S("Sync: empty, never written, null", e =>
            {
                e.Put("f");
                return Join(R(() => e.D.Sync(Array.Empty<string>())), R(() => e.D.Sync(new[] { "f", "nope" })), R(() => e.D.Sync(null)));
            });
            yield return S("Sync: written and closed; open and flushed; twice", e =>
            {
                using (IndexOutput o = e.Out("a"))
                    o.WriteBytes(Data, 10);
                using IndexOutput b = e.Out("b");
                b.WriteBytes(Data, 10);
                b.Flush();
                return Join(R(() => e.D.Sync(new[] { "a", "b" })), R(() => e.D.Sync(new[] { "a", "b" })));
            });
            yield return S("Copy: bytes, missing source, over an existing name", e =>
            {
                e.Put("f");
                using FSDirectory o = e.Another();
                using (IndexOutput w = o.CreateOutput("old", IOContext.DEFAULT))
                    w.WriteBytes(Data, 2000);
                return Join(
                    R(() => { e.D.Copy(o, "f", "g", IOContext.DEFAULT); return File.ReadAllBytes(System.IO.Path.Combine(e.Path, "..", "other", "g")); }),
                    R(() => e.D.Copy(o, "nope", "h", IOContext.DEFAULT)),
                    R(() => { e.D.Copy(o, "f", "old", IOContext.DEFAULT); return o.FileLength("old"); }),
                    R(() => o.ListAll().OrderBy(x => x, StringComparer.Ordinal).ToArray()));
            });
        }

        // ---- IndexInput, its clones, the checksum input ----

        private static Step I(string name, Func<Env, IndexInput, string> run, int size = FileSize, Accept accepted = null) => S(name, e =>
        {
            e.Put("f", size);
            using IndexInput i = e.In("f");
            return run(e, i);
        }, accepted);

        private static IEnumerable<Step> InputSteps()
        {
            yield return I("in: Length, Position at open", (e, i) => Join(R(() => i.Length), R(() => i.Position)));
            yield return I("in: read all in 777-byte pieces", (e, i) =>
            {
                var all = new byte[FileSize];
                for (int at = 0; at < FileSize; at += 777)
                    i.ReadBytes(all, at, Math.Min(777, FileSize - at));
                return Join(Show(all), R(() => i.Position));
            });
            yield return I("in: ReadByte at EOF", (e, i) => Join(R(() => i.Seek(FileSize)), R(() => i.ReadByte()), R(() => i.Position)));
            yield return I("in: empty file ReadByte, ReadBytes(0)", (e, i) => Join(R(() => i.ReadByte()), R(() => i.ReadBytes(new byte[1], 0, 0))), size: 0);
            yield return I("in: ReadBytes crossing EOF", (e, i) => Join(R(() => i.Seek(FileSize - 5)), R(() => ReadN(i, 10))));
            yield return I("in: ReadBytes crossing EOF from buffer", (e, i) => Join(R(() => i.Seek(FileSize - 5)), R(() => i.ReadByte()), R(() => ReadN(i, 10))));
            yield return I("in: ReadInt32/Int64 crossing EOF", (e, i) =>
                Join(R(() => i.Seek(FileSize - 2)), R(() => i.ReadInt32()), R(() => { i.Seek(FileSize - 7); return i.ReadInt64(); })));
            yield return I("in: ReadVInt32 crossing EOF", (e, i) =>
            {
                // the last bytes of a vint with its continuation bit set
                return Join(R(() => i.Seek(FileSize - 1)), R(() => Data[FileSize - 1] >= 0x80 ? i.ReadVInt32() : -1));
            });
            yield return I("in: ReadBytes 0 at EOF", (e, i) => Join(R(() => i.Seek(FileSize)), R(() => i.ReadBytes(new byte[4], 0, 0)), R(() => i.Position)));
            yield return I("in: Seek(length)", (e, i) => Join(R(() => i.Seek(FileSize)), R(() => i.Position)));
            yield return I("in: Seek(length+1) then ReadByte", (e, i) => Join(R(() => i.Seek(FileSize + 1)), R(() => i.ReadByte())));
            yield return I("in: Seek(-1) then ReadByte", (e, i) => Join(R(() => i.Seek(-1)), R(() => i.ReadByte())));
            yield return I("in: Seek back and forth", (e, i) =>
            {
                var sb = new StringBuilder();
                foreach (long p in new long[] { 9_000, 3, 4_095, 4_096, 1_023, 1_024, 9_999, 0 })
                {
                    i.Seek(p);
                    sb.Append(i.ReadByte() == Data[p] ? '=' : 'x');
                }
                return sb.ToString();
            });
            yield return I("in: ReadBytes length -1", (e, i) => R(() => i.ReadBytes(new byte[10], 0, -1)));
            yield return I("in: ReadBytes offset -1", (e, i) => R(() => i.ReadBytes(new byte[10], -1, 1)));
            yield return I("in: ReadBytes offset+length past the array", (e, i) => R(() => i.ReadBytes(new byte[10], 5, 6)));
            yield return I("in: ReadBytes into null", (e, i) => R(() => i.ReadBytes(null, 0, 1)));
            yield return I("in: Dispose twice", (e, i) => Join(R(() => i.Dispose()), R(() => i.Dispose())));
            yield return I("in: disposed: ReadByte, ReadBytes, Seek+read, Length, Clone", (e, i) =>
            {
                i.ReadByte();
                i.Dispose();
                return Join(R(() => i.ReadByte()), R(() => ReadN(i, 2000)), R(() => { i.Seek(5000); return i.ReadByte(); }), R(() => i.Length), R(() => i.Clone() != null));
            });
            yield return I("in: clone keeps the position, moves alone", (e, i) =>
            {
                i.Seek(1234);
                var c = (IndexInput)i.Clone();
                string a = Join(R(() => c.Position), R(() => c.ReadByte() == Data[1234]));
                i.Seek(10);
                return Join(a, R(() => c.Position), R(() => i.Position), R(() => ReadN(c, 3000)));
            });
            yield return I("in: clone of a clone", (e, i) =>
            {
                var c = (IndexInput)i.Clone();
                c.Seek(7777);
                var cc = (IndexInput)c.Clone();
                return Join(R(() => cc.Position), R(() => ReadN(cc, 2223)), R(() => cc.ReadByte()));
            });
            yield return I("in: clone after the parent's Dispose", (e, i) =>
            {
                var c = (IndexInput)i.Clone();
                var cc = (IndexInput)c.Clone();
                i.Dispose();
                return Join(R(() => c.ReadByte()), R(() => ReadN(c, 3000)), R(() => { cc.Seek(5000); return ReadN(cc, 10); }));
            });
            yield return I("in: parent read, cloned, disposed: the clone reads", (e, i) =>
            {
                i.ReadByte();
                var c = (IndexInput)i.Clone();
                var cc = (IndexInput)c.Clone();
                i.Dispose();
                return Join(R(() => c.ReadByte()), R(() => ReadN(c, 3000)), R(() => { cc.Seek(5000); return ReadN(cc, 10); }));
            }, accepted: new("a clone of a mapped input reads on from the mapping after its parent's Dispose, until it leaves "
                             + "its window or seeks (then ObjectDisposedException): a closed check per byte would cost every "
                             + "mapped read, and the mapping is unmapped only once no input refers to it (SharedFile), so the "
                             + "bytes are the file's and never freed memory; unmapped inputs refuse at once, as the built-ins",
                             "^(" + Data[1] + " " + Show(Data.AsSpan(2, 3000).ToArray()) + " !ObjectDisposedException"
                             + "|!ObjectDisposedException !ObjectDisposedException !ObjectDisposedException)$"));
            yield return SL("slice: read, cloned, slice disposed: the clone reads", (e, s) =>
            {
                IndexInput sl = s.OpenSlice("x", 1000, 3000);
                sl.ReadByte();
                var c = (IndexInput)sl.Clone();
                sl.Dispose();
                return Join(R(() => c.ReadByte()), R(() => ReadN(c, 2000)), R(() => { c.Seek(10); return c.ReadByte(); }));
            });
            yield return I("in: clone's own Dispose, then the clone and the parent", (e, i) =>
            {
                var c = (IndexInput)i.Clone();
                c.Dispose();
                return Join(R(() => c.ReadByte()), R(() => ReadN(i, 3000)));
            });
            yield return I("in: file deleted outside while open", (e, i) =>
            {
                string del = R(() => File.Delete(e.At("f")));
                return Join(del, R(() => ReadN(i, FileSize)));
            }) with { PosixDelete = true };
            yield return S("checksum input: read all, Checksum, seek forward, seek back", e =>
            {
                e.Put("f");
                using ChecksumIndexInput c = e.D.OpenChecksumInput("f", e.Ctx);
                string all = R(() => { ReadN(c, FileSize); return c.Checksum == Crc(Data) && c.Position == FileSize; });
                using ChecksumIndexInput c2 = e.D.OpenChecksumInput("f", e.Ctx);
                string fwd = R(() => { c2.Seek(100); return c2.Checksum == Crc(Data.AsSpan(0, 100)); });
                return Join(all, fwd, R(() => c2.Seek(10)), R(() => c.ReadByte()));
            });
            yield return S("checksum input over a clone (BufferedChecksumIndexInput)", e =>
            {
                e.Put("f");
                using IndexInput i = e.In("f");
                i.Seek(10);
                var c = new BufferedChecksumIndexInput((IndexInput)i.Clone());
                return Join(R(() => { ReadN(c, 90); return c.Checksum == Crc(Data.AsSpan(10, 90)); }), R(() => c.Position));
            });
        }

        // ---- slicer ----

        private static Step SL(string name, Func<Env, LuceneDirectory.IndexInputSlicer, string> run, int size = FileSize, Accept accepted = null) => S(name, e =>
        {
            e.Put("f", size);
            using LuceneDirectory.IndexInputSlicer s = e.D.CreateSlicer("f", e.Ctx);
            return run(e, s);
        }, accepted);

        private static IEnumerable<Step> SlicerSteps()
        {
            yield return SL("slice(100,5000): Length, Position, bytes, EOF", (e, s) =>
            {
                using IndexInput sl = s.OpenSlice("_0.fdt", 100, 5000);
                return Join(R(() => sl.Length), R(() => sl.Position), R(() => ReadN(sl, 5000).AsSpan().SequenceEqual(Data.AsSpan(100, 5000))), R(() => sl.ReadByte()));
            });
            yield return SL("slice: Seek(len), Seek(len+1), Seek(-1)", (e, s) =>
            {
                using IndexInput sl = s.OpenSlice("x", 100, 5000);
                return Join(R(() => sl.Seek(5000)), R(() => sl.ReadByte()), R(() => sl.Seek(5001)), R(() => sl.ReadByte()), R(() => sl.Seek(-1)), R(() => sl.ReadByte()));
            });
            yield return SL("slice: ReadBytes crossing its end", (e, s) =>
            {
                using IndexInput sl = s.OpenSlice("x", 100, 5000);
                sl.Seek(4990);
                return R(() => ReadN(sl, 20));
            });
            yield return SL("slice: offset+length past the file", (e, s) => R(() => s.OpenSlice("x", 9000, 2000).Length));
            yield return SL("slice: negative offset", (e, s) => R(() => s.OpenSlice("x", -1, 10).Length));
            yield return SL("slice: negative length", (e, s) => R(() => s.OpenSlice("x", 10, -1).Length));
            yield return SL("slice: empty at the end; of an empty file", (e, s) => R(() => s.OpenSlice("x", FileSize, 0).Length));
            yield return SL("slice of an empty file", (e, s) => Join(R(() => s.OpenSlice("x", 0, 0).Length), R(() => s.OpenFullSlice().Length)), size: 0);
            yield return SL("OpenFullSlice: Length, bytes", (e, s) =>
            {
                using IndexInput f = s.OpenFullSlice();
                return Join(R(() => f.Length), R(() => ReadN(f, FileSize)));
            });
            yield return SL("slice: clone, clone of clone", (e, s) =>
            {
                using IndexInput sl = s.OpenSlice("x", 1000, 3000);
                sl.Seek(500);
                var c = (IndexInput)sl.Clone();
                var cc = (IndexInput)c.Clone();
                return Join(R(() => c.Position), R(() => ReadN(cc, 2500)), R(() => cc.ReadByte()));
            });
            yield return SL("slice: read after the slicer's Dispose", (e, s) =>
            {
                IndexInput sl = s.OpenSlice("x", 1000, 3000);
                s.Dispose();
                string r = Join(R(() => ReadN(sl, 3000)), R(() => s.OpenSlice("y", 0, 1) != null));
                sl.Dispose();
                return r;
            }, accepted: new("a NativeFSDirectory slice owns its file until the slice itself is disposed (SharedFile), so its "
                             + "bytes stay readable, memory-safely, after the slicer's Dispose; CompoundFileDirectory disposes its slices first",
                             "^" + Show(Data.AsSpan(1000, 3000).ToArray()) + " T$"));
            yield return SL("slice: disposed, then read, clone read", (e, s) =>
            {
                IndexInput sl = s.OpenSlice("x", 1000, 3000);
                var c = (IndexInput)sl.Clone();
                sl.Dispose();
                return Join(R(() => sl.ReadByte()), R(() => ReadN(c, 3000)), R(() => sl.Dispose()));
            });
            yield return SL("slicer: Dispose twice", (e, s) => Join(R(() => s.Dispose()), R(() => s.Dispose())));
            yield return S("slicer: missing file", e => R(() => e.D.CreateSlicer("nope", e.Ctx)));
        }

        // ---- IndexOutput ----

        private static Step O(string name, Func<Env, IndexOutput, string> run, Accept accepted = null) => S(name, e =>
        {
            IndexOutput o = e.Out("w");
            try
            {
                return run(e, o);
            }
            finally
            {
                try { o.Dispose(); } catch (Exception) { }
            }
        }, accepted);

        private static IEnumerable<Step> OutputSteps()
        {
            yield return O("out: just created: Position, Length, Checksum, FileLength", (e, o) =>
                Join(R(() => o.Position), R(() => o.Length), R(() => o.Checksum), R(() => e.D.FileLength("w"))));
            yield return O("out: 3 writes: Position, Length, Checksum, FileLength unflushed", (e, o) =>
            {
                o.WriteByte(Data[0]);
                o.WriteBytes(Data, 1, 10);
                o.WriteInt32(12345);
                var want = Data.Take(11).Concat(new byte[] { 0, 0, 0x30, 0x39 }).ToArray();
                return Join(R(() => o.Position), R(() => o.Length), R(() => o.Checksum == Crc(want)), R(() => e.D.FileLength("w")));
            }, accepted: Platform.Mono == null ? null : new("on Mono the built-ins' file already holds bytes not yet flushed "
                + "(Mono's FileStream hands them to the OS); NativeFSDirectory's reach the file at Flush, as the built-ins' do on .NET",
                "^15 15 T 0$"));
            yield return O("out: after Flush: Position, Length, Checksum, FileLength", (e, o) =>
            {
                o.WriteBytes(Data, 9000);
                o.Flush();
                return Join(R(() => o.Position), R(() => o.Length), R(() => o.Checksum == Crc(Data.AsSpan(0, 9000))), R(() => e.D.FileLength("w")));
            });
            yield return O("out: Checksum then more writes", (e, o) =>
            {
                o.WriteBytes(Data, 100);
                long c1 = o.Checksum;
                o.WriteBytes(Data, 100, 9900);
                return Join(R(() => c1 == Crc(Data.AsSpan(0, 100))), R(() => o.Checksum == Crc(Data)), R(() => o.Position));
            });
            yield return O("out: Dispose twice, then FileLength", (e, o) =>
            {
                o.WriteBytes(Data, 5000);
                return Join(R(() => o.Dispose()), R(() => o.Dispose()), R(() => e.D.FileLength("w")), R(() => File.ReadAllBytes(e.At("w"))));
            });
            yield return O("out: disposed: WriteByte, WriteBytes, Flush", (e, o) =>
            {
                o.WriteByte(1);
                o.Dispose();
                return Join(R(() => o.WriteByte(2)), R(() => o.WriteBytes(Data, 10)), R(() => o.Flush()), R(() => e.D.FileLength("w")));
            });
            yield return O("out: disposed: Position, Length, Checksum", (e, o) =>
            {
                o.WriteBytes(Data, 10);
                o.Dispose();
                return Join(R(() => o.Position), R(() => o.Length), R(() => o.Checksum == Crc(Data.AsSpan(0, 10))));
            });
            yield return O("out: WriteBytes length -1, offset -1, past the array, null", (e, o) =>
                Join(R(() => o.WriteBytes(new byte[10], 0, -1)), R(() => o.WriteBytes(new byte[10], -1, 1)),
                     R(() => o.WriteBytes(new byte[10], 5, 6)), R(() => o.WriteBytes(null, 0, 1)), R(() => o.Position)),
                new("a bad offset is ArgumentOutOfRangeException, as every input's ReadBytes throws; the built-in outputs' "
                    + "IndexOutOfRangeException comes from their CRC loop, and Lucene.NET catches both as one (IsIndexOutOfBoundsException)",
                    "^!ArgumentOutOfRangeException !ArgumentOutOfRangeException !ArgumentOutOfRangeException !NullReferenceException 0$"));
            yield return O("out: Seek past the end, then write", (e, o) =>
            {
                o.WriteBytes(Data, 10);
                return Join(R(() => o.Seek(20)), R(() => o.WriteByte(5)), R(() => o.Position), R(() => o.Length),
                    R(() => { o.Dispose(); return File.ReadAllBytes(e.At("w")); }));
            });
            yield return O("out: Seek negative", (e, o) => Join(R(() => o.Seek(-1)), R(() => o.Position)));
            yield return O("out: CopyBytes from an input, past its end", (e, o) =>
            {
                e.Put("f");
                using IndexInput i = e.In("f");
                i.Seek(100);
                string a = R(() => { o.CopyBytes(i, 5000); return o.Position; });
                string b = R(() => o.CopyBytes(i, 5000));
                return Join(a, b, R(() => o.Checksum == Crc(Data.AsSpan(100, 5000))));
            });
        }

        // ---- Lock, LockFactory ----

        private static IEnumerable<Step> LockSteps()
        {
            yield return S("lock: Obtain, Obtain again, IsLocked", e =>
            {
                Lock l = e.D.MakeLock("write.lock");
                return Join(R(() => l.Obtain()), R(() => l.Obtain()), R(() => l.IsLocked()), R(() => { l.Dispose(); return "ok"; }));
            });
            yield return S("lock: a second lock of the name while held", e =>
            {
                using Lock l = e.D.MakeLock("write.lock");
                l.Obtain();
                using Lock m = e.D.MakeLock("write.lock");
                return Join(R(() => m.Obtain()), R(() => m.IsLocked()), R(() => m.Obtain(20)));
            });
            yield return S("lock: another directory on the folder while held", e =>
            {
                using Lock l = e.D.MakeLock("write.lock");
                l.Obtain();
                using FSDirectory d2 = Make(e.Kind, e.Path);
                using Lock m = d2.MakeLock("write.lock");
                return Join(R(() => m.Obtain()), R(() => m.IsLocked()));
            });
            yield return S("lock: Dispose, IsLocked, Obtain by another, Dispose twice", e =>
            {
                Lock l = e.D.MakeLock("write.lock");
                l.Obtain();
                l.Dispose();
                using Lock m = e.D.MakeLock("write.lock");
                return Join(R(() => l.IsLocked()), R(() => m.Obtain()), R(() => l.Dispose()), R(() => m.IsLocked()));
            });
            yield return S("lock: Obtain after its own Dispose", e =>
            {
                Lock l = e.D.MakeLock("write.lock");
                l.Obtain();
                l.Dispose();
                string r = Join(R(() => l.Obtain()), R(() => l.IsLocked()));
                l.Dispose();
                return r;
            });
            yield return S("lock: the lock file in ListAll (held, released)", e =>
            {
                Lock l = e.D.MakeLock("write.lock");
                l.Obtain();
                string held = R(() => e.D.ListAll());
                l.Dispose();
                return Join(held, R(() => e.D.ListAll()));
            }, new("nd_lock leaves the lock file in place: deleting it on release races a process about to lock it "
                   + "(both would hold a lock, on two files); Lucene's tests accept a leftover write.lock (TestIndexWriter.TestEmptyDirRollback)",
                   @"^\[write\.lock\] \[write\.lock\]$"));
            yield return S("lock: IsLocked never obtained; ClearLock not held", e =>
            {
                using Lock l = e.D.MakeLock("write.lock");
                return Join(R(() => l.IsLocked()), R(() => e.D.ClearLock("write.lock")), R(() => l.Obtain()));
            });
            yield return S("lock: held, then the directory disposed: IsLocked, Dispose, Obtain, ClearLock", e =>
            {
                Lock l = e.D.MakeLock("write.lock");
                l.Obtain();
                e.D.Dispose();
                Lock m = e.D.MakeLock("write.lock");
                return Join(R(() => l.IsLocked()), R(() => l.Dispose()), R(() => m.Obtain()), R(() => m.IsLocked()),
                    R(() => { m.Dispose(); return "ok"; }), R(() => e.D.ClearLock("write.lock")));
            });
            yield return S("lock: ClearLock while held", e =>
            {
                using Lock l = e.D.MakeLock("write.lock");
                l.Obtain();
                return Join(R(() => e.D.ClearLock("write.lock")), R(() => l.IsLocked()));
            }, new("NativeLockFactory never breaks a lock a live holder has (ClearLock only clears a lock nobody holds); "
                   + "Lucene.NET's NativeFSLockFactory releases the holder's lock in this process, which lets two writers in",
                   "^ok T$"));
            yield return S("lock: LockPrefix, LockID", e =>
            {
                using FSDirectory d2 = Make(e.Kind, e.Path);
                return Join(R(() => e.D.LockFactory.LockPrefix ?? "null"), R(() => e.D.GetLockID() == d2.GetLockID()),
                    R(() => e.D.GetLockID().StartsWith("lucene-", StringComparison.Ordinal)));
            });
            yield return S("lock: SetLockFactory after use", e =>
            {
                using Lock l = e.D.MakeLock("write.lock");
                l.Obtain();
                var single = new SingleInstanceLockFactory();
                string set = R(() => e.D.SetLockFactory(single));
                using Lock m = e.D.MakeLock("write.lock");
                return Join(set, R(() => ReferenceEquals(e.D.LockFactory, single)), R(() => single.LockPrefix?.StartsWith("lucene-", StringComparison.Ordinal)), R(() => m.Obtain()));
            });
            yield return S("lock: SetLockFactory(null)", e => R(() => e.D.SetLockFactory(null)));
            yield return S("lock: name with a separator", e => R(() =>
            {
                System.IO.Directory.CreateDirectory(e.At("sub"));
                using Lock l = e.D.MakeLock("sub/write.lock");
                return l.Obtain();
            }), SafeNames);
        }

        internal static IEnumerable<Step> Script() =>
            FolderSteps().Concat(DirectorySteps()).Concat(NameMatrix()).Concat(InputSteps()).Concat(SlicerSteps())
                .Concat(OutputSteps()).Concat(LockSteps());

        internal static string RunStep(Step step, string kind)
        {
            using var e = new Env(kind, step.Folder);
            try
            {
                return step.Run(e);
            }
            catch (Exception x)
            {
                return "!!" + x.GetType().Name; // the preparation itself failed
            }
        }

        private readonly ITestOutputHelper _out;

        public ContractSweepTests(ITestOutputHelper output) => _out = output;

        [Fact]
        public void NativeFSDirectoryMatchesTheBuiltInKinds()
        {
            var clock = System.Diagnostics.Stopwatch.StartNew();
            var kinds = Natives.Concat(BuiltIns).ToArray();
            var rows = new List<(Step Step, Dictionary<string, string> Outcomes, string Verdict, bool Bad)>();
            foreach (Step step in Script())
            {
                var outcomes = kinds.ToDictionary(k => k, k => RunStep(step, k));
                var builtin = BuiltIns.Select(k => outcomes[k]).Distinct().ToList();
                bool agree = builtin.Count == 1;
                var verdicts = new List<string>();
                bool bad = false;
                foreach (string n in Natives)
                {
                    string got = outcomes[n];
                    string match = BuiltIns.FirstOrDefault(k => outcomes[k] == got);
                    if (match != null)
                        verdicts.Add(agree ? "=" : $"{n}~{match}");
                    else if (step.Accepted != null)
                        verdicts.Add($"{n}: ACCEPTED DIFFERENCE");
                    else if (step.PosixDelete && OperatingSystem.IsWindows())
                    {
                        verdicts.Add($"{n}: DIFFERS, NOT ASSERTED ON WINDOWS (delete semantics)");
                        Console.Error.WriteLine($"*** NOT ASSERTED on Windows{(Emulator.Wine != null ? $" (Wine {Emulator.Wine})" : "")}: "
                                                + $"sweep step '{step.Name}' on {n} ({got}): it deletes what another handle holds open");
                    }
                    else
                    {
                        verdicts.Add($"{n}: DIFFERS");
                        bad = true;
                    }
                }
                rows.Add((step, outcomes, string.Join(", ", verdicts.Distinct()), bad));
            }

            var table = new StringBuilder();
            table.AppendLine($"Directory contract sweep: {rows.Count} steps x {kinds.Length} kinds ({string.Join(", ", kinds)}); "
                             + "an outcome is what the step observed, or !ExceptionType");
            foreach (var (step, outcomes, verdict, bad) in rows)
            {
                table.AppendLine($"{(bad ? "FAIL" : "ok  ")} {step.Name}  [{verdict}]");
                foreach (var group in kinds.GroupBy(k => outcomes[k]))
                    table.AppendLine($"       {string.Join("/", group),-30} {group.Key}");
                if (step.Accepted != null && verdict.Contains("ACCEPTED", StringComparison.Ordinal))
                    table.AppendLine($"       (accepted: {step.Accepted.Reason}; ours must match /{step.Accepted.Ours}/)");
            }
            table.AppendLine($"({rows.Count * kinds.Length} outcomes in {clock.ElapsedMilliseconds} ms)");
            string text = table.ToString();
            _out.WriteLine(text);
            Console.Out.Write(text);

            var failures = rows.Where(r => r.Bad).Select(r => r.Step.Name).ToList();
            Assert.True(failures.Count == 0, $"NativeFSDirectory differs from every built-in kind in {failures.Count} steps: "
                                             + string.Join("; ", failures));
            // an accepted difference is still pinned: ours must be the outcome the reason describes
            foreach (var (step, outcomes, verdict, _) in rows.Where(r => r.Step.Accepted != null))
                foreach (string n in Natives)
                    Assert.True(BuiltIns.Any(k => outcomes[k] == outcomes[n]) || Regex.IsMatch(outcomes[n], step.Accepted.Ours),
                        $"{step.Name} on {n}: {outcomes[n]} is neither a built-in's outcome nor the accepted /{step.Accepted.Ours}/");
        }

        // ---- what Lucene.NET's Store tests check beyond the table, on every kind side by side ----

        public static TheoryData<string> AllKinds => new(Natives.Concat(BuiltIns));

        private static FSDirectory Open(string kind, string path, out IOContext ctx)
        {
            using var probe = new Env(kind, Folder.Missing);
            ctx = probe.Ctx;
            return Make(kind, path);
        }

        private static byte Value(int i) => unchecked((byte)((i % 256) * (1 + i / 256)));

        [Theory]
        [MemberData(nameof(AllKinds))]
        public void CopyBytesMixedWithByteReads(string kind)
        {
            // TestCopyBytes: a file written in odd-sized pieces, copied by a mix of single bytes
            // and CopyBytes runs of random length, reads back byte for byte
            using var t = new TestDir("copybytes");
            using FSDirectory d = Open(kind, t.Path, out IOContext ctx);
            var rnd = new Random(4242);
            foreach (int size in new[] { 1, 4095, 70_001, 300_017 })
            {
                var piece = new byte[rnd.Next(1, 20_000)];
                using (IndexOutput o = d.CreateOutput("test", ctx))
                {
                    int upto = 0;
                    while (upto < size)
                    {
                        int n = Math.Min(piece.Length, size - upto);
                        for (int k = 0; k < n; k++)
                            piece[k] = Value(upto + k);
                        o.WriteBytes(piece, 0, n);
                        upto += n;
                    }
                    Assert.Equal(size, o.Position);
                }
                Assert.Equal(size, d.FileLength("test"));
                using (IndexInput i = d.OpenInput("test", ctx))
                using (IndexOutput o = d.CreateOutput("test2", ctx))
                {
                    int upto = 0;
                    while (upto < size)
                    {
                        if (rnd.Next(2) == 0)
                        {
                            o.WriteByte(i.ReadByte());
                            upto++;
                        }
                        else
                        {
                            int n = Math.Min(rnd.Next(1, piece.Length + 1), size - upto);
                            o.CopyBytes(i, n);
                            upto += n;
                        }
                    }
                    Assert.Throws<EndOfStreamException>(() => o.CopyBytes(i, 1));
                }
                using (IndexInput i = d.OpenInput("test2", ctx))
                {
                    Assert.Equal(size, i.Length);
                    int upto = 0;
                    while (upto < size)
                    {
                        if (rnd.Next(2) == 0)
                        {
                            Assert.Equal(Value(upto), i.ReadByte());
                            upto++;
                        }
                        else
                        {
                            int n = Math.Min(rnd.Next(1, piece.Length + 1), size - upto);
                            i.ReadBytes(piece, 0, n);
                            for (int k = 0; k < n; k++)
                                Assert.True(Value(upto + k) == piece[k], $"{kind}: byte {upto + k} of {size}");
                            upto += n;
                        }
                    }
                }
                d.DeleteFile("test");
                d.DeleteFile("test2");
            }
            Assert.Empty(d.ListAll());
        }

        [Theory]
        [MemberData(nameof(AllKinds))]
        public void CopyBytesFromClonesOnThreads(string kind)
        {
            // TestCopyBytesWithThreads: clones of one input, each copied on its own thread after a
            // shared header, give identical files
            using var t = new TestDir("copythreads");
            using FSDirectory d = Open(kind, t.Path, out IOContext ctx);
            byte[] data = new byte[9_001];
            new Random(17).NextBytes(data);
            using (IndexOutput o = d.CreateOutput("data", ctx))
                o.WriteBytes(data, data.Length);
            using IndexInput input = d.OpenInput("data", ctx);
            using (IndexOutput header = d.CreateOutput("header", ctx))
                header.CopyBytes(input, 100);
            var outputs = Enumerable.Range(0, 4).Select(n => d.CreateOutput("copy" + n, ctx)).ToArray();
            var clones = outputs.Select(_ => (IndexInput)input.Clone()).ToArray();
            var threads = outputs.Select((o, n) => new System.Threading.Thread(() =>
            {
                o.CopyBytes(clones[n], data.Length - 100);
                o.Dispose();
            })).ToArray();
            foreach (var th in threads)
                th.Start();
            foreach (var th in threads)
                th.Join();
            for (int n = 0; n < outputs.Length; n++)
            {
                using IndexInput c = d.OpenInput("copy" + n, ctx);
                Assert.Equal(data.Length - 100, c.Length);
                Assert.True(data.AsSpan(100).SequenceEqual(ReadN(c, data.Length - 100)), $"{kind}: copy {n}");
            }
        }

        [Theory]
        [MemberData(nameof(AllKinds))]
        public void RandomSeeksAndReadsInSlicesAndClones(string kind)
        {
            // TestMultiMMap's sliced seeking and random chunk sizes: any slice, any seek, any read
            // length, across every buffer and chunk boundary, in a slice, a clone of it and a clone
            // of that clone, gives the file's bytes and values
            using var t = new TestDir("slices");
            using FSDirectory d = Open(kind, t.Path, out IOContext ctx);
            const int n = 200_003;
            byte[] data = new byte[n];
            new Random(31).NextBytes(data);
            using (IndexOutput o = d.CreateOutput("_0.cfs", ctx))
                o.WriteBytes(data, n);
            var rnd = new Random(77);
            using LuceneDirectory.IndexInputSlicer slicer = d.CreateSlicer("_0.cfs", ctx);
            for (int round = 0; round < 40; round++)
            {
                int start = rnd.Next(n), len = rnd.Next(n - start + 1);
                using IndexInput slice = slicer.OpenSlice("_0.fdt", start, len);
                IndexInput clone = (IndexInput)slice.Clone(), cc = (IndexInput)clone.Clone();
                foreach (IndexInput i in new[] { slice, clone, cc })
                {
                    Assert.Equal(len, i.Length);
                    for (int k = 0; k < 8 && len > 0; k++)
                    {
                        int at = rnd.Next(len), m = rnd.Next(Math.Min(len - at, 20_000) + 1);
                        i.Seek(at);
                        switch (rnd.Next(4))
                        {
                            case 0:
                                Assert.True(data.AsSpan(start + at, m).SequenceEqual(ReadN(i, m)), $"{kind}: [{at},+{m}) of [{start},+{len})");
                                break;
                            case 1:
                                Assert.Equal(data[start + at], i.ReadByte());
                                break;
                            case 2 when len - at >= 8:
                                Assert.Equal(System.Buffers.Binary.BinaryPrimitives.ReadInt64BigEndian(data.AsSpan(start + at)), i.ReadInt64());
                                break;
                            default:
                                if (len - at >= 4)
                                    Assert.Equal(System.Buffers.Binary.BinaryPrimitives.ReadInt32BigEndian(data.AsSpan(start + at)), i.ReadInt32());
                                break;
                        }
                    }
                    i.Seek(len);
                    Assert.Throws<EndOfStreamException>(() => i.ReadByte());
                }
            }
        }

        [Theory]
        [MemberData(nameof(AllKinds))]
        public void FilesOneKindWritesEveryKindReads(string kind)
        {
            // TestDirectInstantiation: a file this kind writes (every value type, across buffer
            // boundaries) reads the same through every other kind on the folder, with and without
            // the input's buffer, and a delete through one kind is seen by all
            using var t = new TestDir("interop");
            using FSDirectory d = Open(kind, t.Path, out IOContext ctx);
            var rnd = new Random(5);
            byte[] big = new byte[rnd.Next(70_000, 256 * 1024)];
            for (int k = 0; k < big.Length; k++)
                big[k] = (byte)k;
            using (IndexOutput o = d.CreateOutput("foo", ctx))
            {
                o.WriteByte(9);
                o.WriteBytes(big, big.Length);
                o.WriteVInt32(int.MaxValue);
                o.WriteVInt64(long.MaxValue);
                o.WriteInt32(-3);
                o.WriteInt64(-4);
                o.WriteString("ünïcode ✓");
            }
            long length = d.FileLength("foo");
            foreach (string other in Natives.Concat(BuiltIns))
            {
                using FSDirectory d2 = Open(other, t.Path, out IOContext ctx2);
                Assert.True(d2.FileExists("foo"), $"{kind} -> {other}");
                Assert.Equal(length, d2.FileLength("foo"));
                using IndexInput i = d2.OpenInput("foo", ctx2);
                Assert.Equal(9, i.ReadByte());
                var back = new byte[big.Length];
                i.ReadBytes(back, 0, back.Length, true);
                Assert.True(big.AsSpan().SequenceEqual(back), $"{kind} -> {other}: bytes (buffered)");
                Assert.Equal(int.MaxValue, i.ReadVInt32());
                Assert.Equal(long.MaxValue, i.ReadVInt64());
                Assert.Equal(-3, i.ReadInt32());
                Assert.Equal(-4L, i.ReadInt64());
                Assert.Equal("ünïcode ✓", i.ReadString());
                Assert.Equal(length, i.Position);
                i.Seek(1);
                Array.Clear(back);
                i.ReadBytes(back, 0, back.Length, false);
                Assert.True(big.AsSpan().SequenceEqual(back), $"{kind} -> {other}: bytes (unbuffered)");
            }
            // every input is disposed; a mapping read stays until the collector finds no input
            // left (SharedFile), and Windows keeps a mapped file's name until then
            GC.Collect();
            GC.WaitForPendingFinalizers();
            using (FSDirectory d2 = Open(BuiltIns[rnd.Next(BuiltIns.Length)], t.Path, out _))
                d2.DeleteFile("foo");
            Assert.False(d.FileExists("foo"));
            Assert.Throws<FileNotFoundException>(() => d.OpenInput("foo", ctx));
        }

        [Theory]
        [MemberData(nameof(AllKinds))]
        public void LocksOfOneNameExcludeEachOther(string kind)
        {
            // TestLockFactory.TestNativeFSLockFactory and its lock-file-exists case, through the
            // directory's own factory
            using var t = new TestDir("locks");
            File.WriteAllBytes(Path.Combine(t.Path, "pre.lock"), Array.Empty<byte>());
            using FSDirectory d = Open(kind, t.Path, out _);
            Assert.Null(d.LockFactory.LockPrefix);
            Lock l = d.MakeLock("commit"), l2 = d.MakeLock("commit");
            Assert.True(l.Obtain());
            Assert.False(l2.Obtain());
            l.Dispose();
            Assert.True(l2.Obtain());
            l2.Dispose();
            Assert.True(l.Obtain());
            Assert.True(l.IsLocked());
            Assert.True(l2.IsLocked());
            l.Dispose();
            Assert.False(l.IsLocked());
            Assert.False(l2.IsLocked());
            // a lock file already there (left by a crashed writer) is no lock
            Lock pre = d.MakeLock("pre.lock");
            Assert.True(pre.Obtain());
            pre.Dispose();
            Assert.False(pre.IsLocked());
            // Obtain with a timeout on a held lock gives up with LockObtainFailedException
            using Lock held = d.MakeLock("write.lock");
            Assert.True(held.Obtain());
            using FSDirectory d2 = Open(kind, t.Path, out _);
            Assert.Throws<LockObtainFailedException>(() => d2.MakeLock("write.lock").Obtain(30));
        }

        [Theory]
        [MemberData(nameof(AllKinds))]
        public void LockFactoryElsewhereGetsAPrefix(string kind)
        {
            // TestLockFactory.TestNativeFSLockFactoryPrefix: locks kept in another folder are
            // prefixed with the directory's lock ID; locks in the index folder are not
            using var t = new TestDir("prefix");
            string index = t.Sub("index"), locks = t.Sub("locks");
            var here = new NativeFSLockFactory(new DirectoryInfo(index));
            var there = new NativeFSLockFactory(new DirectoryInfo(locks));
            using FSDirectory d1 = kind.StartsWith("NativeFS", StringComparison.Ordinal) ? new NativeFSDirectory(index, here) : Make(kind, index);
            if (!kind.StartsWith("NativeFS", StringComparison.Ordinal))
                d1.SetLockFactory(here);
            using FSDirectory d2 = kind.StartsWith("NativeFS", StringComparison.Ordinal) ? new NativeFSDirectory(index, there) : Make(kind, index);
            if (!kind.StartsWith("NativeFS", StringComparison.Ordinal))
                d2.SetLockFactory(there);
            Assert.Null(d1.LockFactory.LockPrefix);
            Assert.Equal(d2.GetLockID(), d2.LockFactory.LockPrefix);
        }

        [Theory]
        [MemberData(nameof(AllKinds))]
        public void DisposedDirectoryIsDetectedAfterLocking(string kind)
        {
            // TestDirectory.TestDetectClose, with a lock held across the Dispose (as an IndexWriter
            // disposed after its directory holds write.lock): the directory refuses work, the lock
            // still releases, and the next directory on the folder gets it
            using var t = new TestDir("closedlock");
            FSDirectory d = Open(kind, t.Path, out IOContext ctx);
            Lock l = d.MakeLock("write.lock");
            Assert.True(l.Obtain());
            d.Dispose();
            Assert.Throws<ObjectDisposedException>(() => d.CreateOutput("test", ctx));
            Assert.Throws<ObjectDisposedException>(() => d.ListAll());
            Assert.True(l.IsLocked());
            l.Dispose();
            d.Dispose(); // twice: nothing (TestDoubleDispose)
            using FSDirectory again = Open(kind, t.Path, out _);
            using Lock l2 = again.MakeLock("write.lock");
            Assert.True(l2.Obtain());
        }

        [Theory]
        [MemberData(nameof(AllKinds))]
        public void CreatingAndListingOnTwoThreads(string kind)
        {
            // TestDirectory.TestThreadSafety: one thread creates files while another lists and
            // opens them; a file may vanish between the two only as FileNotFoundException or
            // DirectoryNotFoundException (what Lucene.NET catches as NoSuchFile), never another error
            using var t = new TestDir("threads");
            using FSDirectory d = Open(kind, t.Path, out IOContext ctx);
            Exception failed = null;
            var writer = new System.Threading.Thread(() =>
            {
                try
                {
                    for (int k = 0; k < 200; k++)
                    {
                        using (d.CreateOutput("t" + k, ctx)) { }
                        Assert.True(d.FileExists("t" + k));
                    }
                }
                catch (Exception e)
                {
                    failed ??= e;
                }
            });
            writer.Start();
            while (writer.IsAlive)
            {
                foreach (string f in d.ListAll())
                {
                    try
                    {
                        using IndexInput i = d.OpenInput(f, ctx);
                    }
                    catch (Exception e) when (e is FileNotFoundException || e is DirectoryNotFoundException)
                    {
                    }
                }
            }
            writer.Join();
            Assert.Null(failed);
            Assert.Equal(200, d.ListAll().Length);
        }

        [Theory]
        [MemberData(nameof(AllKinds))]
        public void CopyingADirectoryLeavesItsSubfoldersOut(string kind)
        {
            // TestDirectory.TestCopySubdir and TestFsyncDoesntCreateNewFiles
            using var t = new TestDir("copysub");
            t.Sub("subdir");
            using FSDirectory d = Open(kind, t.Path, out IOContext ctx);
            using (var ram = new RAMDirectory(d, ctx))
                Assert.Empty(ram.ListAll());
            using (IndexOutput o = d.CreateOutput("afile", ctx))
                o.WriteString("boo");
            File.Delete(Path.Combine(t.Path, "afile"));
            Assert.Empty(d.ListAll());
            Assert.Empty(d.ListAll());
        }
    }
}
