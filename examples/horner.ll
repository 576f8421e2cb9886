; LLVM IR produced by `clang-19 -O2 -gline-tables-only -S -emit-llvm` from a 5-line C function (Horner evaluation).
; ModuleID = 'horner.c'
source_filename = "horner.c"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

; Function Attrs: nofree norecurse nosync nounwind memory(argmem: read) uwtable
define dso_local double @horner(ptr nocapture noundef readonly %0, i32 noundef %1, double noundef %2) local_unnamed_addr #0 !dbg !9 {
  %4 = icmp sgt i32 %1, -1, !dbg !12
  br i1 %4, label %5, label %28, !dbg !13

5:                                                ; preds = %3
  %6 = zext nneg i32 %1 to i64, !dbg !13
  %7 = add nuw nsw i64 %6, 1, !dbg !13
  %8 = and i64 %7, 3, !dbg !13
  %9 = icmp eq i64 %8, 0, !dbg !13
  br i1 %9, label %20, label %10, !dbg !13

10:                                               ; preds = %5, %10
  %11 = phi i64 [ %17, %10 ], [ %6, %5 ]
  %12 = phi double [ %16, %10 ], [ 0.000000e+00, %5 ]
  %13 = phi i64 [ %18, %10 ], [ 0, %5 ]
  %14 = getelementptr inbounds double, ptr %0, i64 %11, !dbg !14
  %15 = load double, ptr %14, align 8, !dbg !14, !tbaa !15
  %16 = tail call double @llvm.fmuladd.f64(double %12, double %2, double %15), !dbg !19
  %17 = add nsw i64 %11, -1, !dbg !20
  %18 = add i64 %13, 1, !dbg !13
  %19 = icmp eq i64 %18, %8, !dbg !13
  br i1 %19, label %20, label %10, !dbg !13, !llvm.loop !21

20:                                               ; preds = %10, %5
  %21 = phi double [ poison, %5 ], [ %16, %10 ]
  %22 = phi i64 [ %6, %5 ], [ %17, %10 ]
  %23 = phi double [ 0.000000e+00, %5 ], [ %16, %10 ]
  %24 = icmp ult i32 %1, 3, !dbg !13
  br i1 %24, label %28, label %25, !dbg !13

25:                                               ; preds = %20
  %26 = getelementptr i8, ptr %0, i64 -8, !dbg !13
  %27 = getelementptr i8, ptr %0, i64 -16, !dbg !13
  br label %30, !dbg !13

28:                                               ; preds = %20, %30, %3
  %29 = phi double [ 0.000000e+00, %3 ], [ %21, %20 ], [ %45, %30 ], !dbg !23
  ret double %29, !dbg !24

30:                                               ; preds = %30, %25
  %31 = phi i64 [ %22, %25 ], [ %46, %30 ]
  %32 = phi double [ %23, %25 ], [ %45, %30 ]
  %33 = getelementptr inbounds double, ptr %0, i64 %31, !dbg !14
  %34 = load double, ptr %33, align 8, !dbg !14, !tbaa !15
  %35 = tail call double @llvm.fmuladd.f64(double %32, double %2, double %34), !dbg !19
  %36 = getelementptr double, ptr %26, i64 %31, !dbg !14
  %37 = load double, ptr %36, align 8, !dbg !14, !tbaa !15
  %38 = tail call double @llvm.fmuladd.f64(double %35, double %2, double %37), !dbg !19
  %39 = getelementptr double, ptr %27, i64 %31, !dbg !14
  %40 = load double, ptr %39, align 8, !dbg !14, !tbaa !15
  %41 = tail call double @llvm.fmuladd.f64(double %38, double %2, double %40), !dbg !19
  %42 = add nsw i64 %31, -3, !dbg !20
  %43 = getelementptr inbounds double, ptr %0, i64 %42, !dbg !14
  %44 = load double, ptr %43, align 8, !dbg !14, !tbaa !15
  %45 = tail call double @llvm.fmuladd.f64(double %41, double %2, double %44), !dbg !19
  %46 = add nsw i64 %31, -4, !dbg !20
  %47 = icmp eq i64 %42, 0, !dbg !12
  br i1 %47, label %28, label %30, !dbg !13, !llvm.loop !25
}

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare double @llvm.fmuladd.f64(double, double, double) #1

attributes #0 = { nofree norecurse nosync nounwind memory(argmem: read) uwtable "min-legal-vector-width"="0" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="x86-64" "target-features"="+cmov,+cx8,+fxsr,+mmx,+sse,+sse2,+x87" "tune-cpu"="generic" }
attributes #1 = { mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none) }

!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!2, !3, !4, !5, !6, !7}
!llvm.ident = !{!8}

!0 = distinct !DICompileUnit(language: DW_LANG_C11, file: !1, producer: "Debian clang version 19.1.7 (3~deb12u1)", isOptimized: true, runtimeVersion: 0, emissionKind: LineTablesOnly, splitDebugInlining: false, nameTableKind: None)
!1 = !DIFile(filename: "horner.c", directory: "/work/main/examples", checksumkind: CSK_MD5, checksum: "3a7568f2c2405c96866a3e8c529625a6")
!2 = !{i32 7, !"Dwarf Version", i32 5}
!3 = !{i32 2, !"Debug Info Version", i32 3}
!4 = !{i32 1, !"wchar_size", i32 4}
!5 = !{i32 8, !"PIC Level", i32 2}
!6 = !{i32 7, !"PIE Level", i32 2}
!7 = !{i32 7, !"uwtable", i32 2}
!8 = !{!"Debian clang version 19.1.7 (3~deb12u1)"}
!9 = distinct !DISubprogram(name: "horner", scope: !1, file: !1, line: 1, type: !10, scopeLine: 1, flags: DIFlagPrototyped | DIFlagAllCallsDescribed, spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !0)
!10 = !DISubroutineType(types: !11)
!11 = !{}
!12 = !DILocation(line: 3, column: 28, scope: !9)
!13 = !DILocation(line: 3, column: 5, scope: !9)
!14 = !DILocation(line: 4, column: 21, scope: !9)
!15 = !{!16, !16, i64 0}
!16 = !{!"double", !17, i64 0}
!17 = !{!"omnipotent char", !18, i64 0}
!18 = !{!"Simple C/C++ TBAA"}
!19 = !DILocation(line: 4, column: 19, scope: !9)
!20 = !DILocation(line: 3, column: 35, scope: !9)
!21 = distinct !{!21, !22}
!22 = !{!"llvm.loop.unroll.disable"}
!23 = !DILocation(line: 0, scope: !9)
!24 = !DILocation(line: 5, column: 5, scope: !9)
!25 = distinct !{!25, !13, !26, !27}
!26 = !DILocation(line: 4, column: 24, scope: !9)
!27 = !{!"llvm.loop.mustprogress"}
