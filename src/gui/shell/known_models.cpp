#include "gui/shell/known_models.h"

#include "engine/capacity_planner.h"
#include "gui/performance/capacity_plan_view.h"
#include "gui/performance/serving_parameters_panel.h"

#ifdef Q_OS_WIN
#include <windows.h>
#else
#include <unistd.h>
#endif

namespace brook {

QList<KnownModel> KnownModels::list()
{
    const ModelConfig ernie03b = ServingParametersPanel::ernie03bShape();
    return {
        {QStringLiteral("baidu/ERNIE-4.5-0.3B-PT"), QStringLiteral("PaddlePaddle/ERNIE-4.5-0.3B-PT"), ernie03b},
        {QStringLiteral("baidu/ERNIE-4.5-0.3B-Base-PT"), QStringLiteral("PaddlePaddle/ERNIE-4.5-0.3B-Base-PT"),
         ernie03b},
    };
}

qint64 KnownModels::hostMemoryBytes()
{
#ifdef Q_OS_WIN
    MEMORYSTATUSEX status;
    status.dwLength = sizeof(status);
    return GlobalMemoryStatusEx(&status) ? qint64(status.ullTotalPhys) : 0;
#else
    const long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && pageSize > 0 ? qint64(pages) * pageSize : 0;
#endif
}

KnownModelFit KnownModels::fit(const KnownModel& model, const LaunchOptions& serving, qint64 hostBytes)
{
    KnownModelFit f;
    f.downloadBytes = CapacityPlanner::weightBytes(model.shape, model.downloadElementBytes, std::string());
    CapacityInput in;
    static_cast<ServingSettings&>(in) = serving;
    in.model = model.shape;
    in.device = "cpu";
    const CapacityPlan plan = CapacityPlanner::plan(in);
    f.neededBytes = plan.weightsBytes + plan.kvCacheBytes + plan.activationBytes;
    f.fits = plan.fits() && hostBytes > 0 && f.neededBytes <= hostBytes * 8 / 10;
    return f;
}

QString KnownModels::describe(const KnownModel& model, const KnownModelFit& fit)
{
    const QString size = CapacityPlanView::formatBytes(double(fit.downloadBytes));
    const QString verdict =
        fit.fits ? tr("fits this computer (needs about %1)").arg(CapacityPlanView::formatBytes(double(fit.neededBytes)))
                 : tr("needs about %1, more than this computer can spare")
                       .arg(CapacityPlanView::formatBytes(double(fit.neededBytes)));
    return tr("%1 · %2 download · %3").arg(model.repo, size, verdict);
}

}  // namespace brook
