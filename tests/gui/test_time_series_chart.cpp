// TimeSeriesChart on made-up samples: a line breaks where values are missing or samples stop (no
// straight segment across an idle gap), an idle axis has labels that differ, and a dashed p95
// has a legend swatch of its own beside its p50. Built with BROOK_WITH_CHARTS=OFF, the same data
// checks hold and the live figures show each line's newest value.
#include "gui/performance/time_series_chart.h"

#include <QApplication>
#include <QLabel>
#include <QSet>
#include <QtTest>
#if BROOK_WITH_CHARTS
#include <QChart>
#include <QLegend>
#include <QLegendMarker>
#include <QXYSeries>
#endif

using namespace brook;

namespace {

DashboardSample sample(double t, std::optional<double> p50, std::optional<double> p95)
{
    DashboardSample s;
    s.timeSeconds = t;
    s.values[int(DashboardField::ItlP50Ms)] = p50;
    s.values[int(DashboardField::ItlP95Ms)] = p95;
    return s;
}

QList<TimeSeriesChart::Line> latencyLines()
{
    const QColor teal(0x76, 0xb7, 0xb2);
    return {{DashboardField::ItlP50Ms, teal}, {DashboardField::ItlP95Ms, teal, true}};
}

}  // namespace

class TestTimeSeriesChart : public QObject {
    Q_OBJECT
private slots:
    void aLineBreaksAtMissingValuesAndIdleGaps()
    {
        TimeSeriesChart chart(latencyLines());
        std::vector<DashboardSample> samples;
        for (int t = 1000; t < 1010; ++t) samples.push_back(sample(t, 20, 30));  // traffic
        for (int t = 1010; t < 1020; ++t) samples.push_back(sample(t, {}, {}));  // idle: no values
        for (int t = 1020; t < 1030; ++t) samples.push_back(sample(t, 25, 40));  // traffic
        for (int t = 1060; t < 1070; ++t) samples.push_back(sample(t, 22, 35));  // after 30 s without samples
        chart.redraw(samples, 1000, 1070);
        QCOMPARE(chart.segmentCount(0), 3);
        QCOMPARE(chart.pointCount(0), 30);
        const QList<QPointF> points = chart.points(0);
        QCOMPARE(points.first().x(), 1000 * 1000.0);
        QCOMPARE(points.last().x(), 1069 * 1000.0);

        // Continuous again: one piece, the spare ones emptied.
        samples.clear();
        for (int t = 2000; t < 2040; ++t) samples.push_back(sample(t, 10, 12));
        chart.redraw(samples, 2000, 2040);
        QCOMPARE(chart.segmentCount(0), 1);
        QCOMPARE(chart.pointCount(0), 40);
#if BROOK_WITH_CHARTS
        int drawn = 0;
        for (QAbstractSeries* series : chart.chart()->series()) drawn += int(static_cast<QXYSeries*>(series)->count());
        QCOMPARE(drawn, 80);  // both lines, no stale pieces left on screen
#endif
    }

    void idleAndSmallAxesHaveDistinctLabels()
    {
        TimeSeriesChart chart(latencyLines());
        std::vector<DashboardSample> idle;
        for (int t = 0; t < 20; ++t) idle.push_back(sample(t, {}, {}));
        for (const std::vector<DashboardSample>& samples :
             {idle, std::vector<DashboardSample>{sample(0, 0.004, 0.009), sample(1, 0.003, 0.008)},
              std::vector<DashboardSample>{sample(0, 1234, 2345)}}) {
            chart.redraw(samples, 0, 20);
            const QStringList labels = chart.axisLabels();
            QVERIFY2(QSet<QString>(labels.begin(), labels.end()).size() == labels.size(),
                     qPrintable(labels.join(QStringLiteral(" "))));
        }
    }

    void p95HasItsOwnLegendSwatch()
    {
        TimeSeriesChart chart(latencyLines());
        chart.setLineName(0, QStringLiteral("p50"));
        chart.setLineName(1, QStringLiteral("p95"));
        QVERIFY(chart.drawnColor(0) != chart.drawnColor(1));
#if BROOK_WITH_CHARTS
        QList<QLegendMarker*> shown;
        for (QLegendMarker* m : chart.chart()->legend()->markers())
            if (m->isVisible()) shown << m;
        QCOMPARE(shown.size(), 2);
        QVERIFY(shown[0]->pen().color() != shown[1]->pen().color() || shown[0]->brush() != shown[1]->brush());
        QCOMPARE(chart.chart()->legend()->markerShape(), QLegend::MarkerShapeFromSeries);
#endif
    }

#if !BROOK_WITH_CHARTS
    // Without Qt Charts each line shows its newest value in the window as a figure; an idle
    // stretch keeps the last value seen, a window without any shows a dash.
    void liveFiguresShowTheNewestValue()
    {
        TimeSeriesChart chart(latencyLines());
        chart.setUnit(QStringLiteral("ms"), 1);
        const QList<QLabel*> figures = chart.findChildren<QLabel*>(QStringLiteral("liveFigure"));
        QCOMPARE(figures.size(), 2);
        std::vector<DashboardSample> samples{sample(0, 20, 30), sample(1, 25, 40), sample(2, {}, {})};
        chart.redraw(samples, 0, 3);
        QCOMPARE(figures[0]->text(), QStringLiteral("25.0 ms"));
        QCOMPARE(figures[1]->text(), QStringLiteral("40.0 ms"));
        QCOMPARE(chart.axisMaximum(), 50.0);  // 44 rounded up to the next round tick step
        chart.redraw({sample(5, {}, {})}, 5, 6);
        QCOMPARE(figures[0]->text(), QStringLiteral("–"));
    }
#endif
};

QTEST_MAIN(TestTimeSeriesChart)
#include "test_time_series_chart.moc"
